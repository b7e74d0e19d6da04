import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui';

// --- /docs --------------------------------------------------------------------------------------

/** The wordmark of the /docs top bar: a waypoint mark and the name, white on the bar's colour. */
const LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="188" height="40" viewBox="0 0 188 40" role="img" aria-label="Waytrack">
<title>Waytrack</title>
<path d="M20 4c-6.6 0-12 5.2-12 11.7C8 24.5 20 36 20 36s12-11.5 12-20.3C32 9.2 26.6 4 20 4z" fill="#34d399"/>
<path d="M13.5 14.5l3.2 7.5 3.3-6 3.3 6 3.2-7.5" fill="none" stroke="#0b3b2e" stroke-width="2.2" stroke-linecap="round" stroke-linejoin="round"/>
<text x="42" y="27" font-family="Inter, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif" font-size="21" font-weight="700" letter-spacing="0.3" fill="#ffffff">Waytrack</text>
<text x="142" y="27" font-family="Inter, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif" font-size="13" font-weight="500" fill="#a7f3d0">API</text>
</svg>`;

const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><title>Waytrack</title>
<rect width="32" height="32" rx="7" fill="#0f5132"/>
<path d="M7 10l4 12 5-8 5 8 4-12" fill="none" stroke="#34d399" stroke-width="3" stroke-linecap="round" stroke-linejoin="round"/>
</svg>`;

/** Readable defaults over Swagger UI's: the brand bar, wider measure, calmer operation blocks; no spec-URL box. */
const DOCS_CSS = `
body { margin: 0; background: #f8faf9; }
.swagger-ui, .swagger-ui .info .title, .swagger-ui .opblock-tag, .swagger-ui .opblock .opblock-summary-description {
  font-family: Inter, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif;
}
.swagger-ui .topbar { background: #0f5132; padding: 8px 0; }
.swagger-ui .topbar .download-url-wrapper { display: none; }
.swagger-ui .topbar .topbar-wrapper > a.link { max-width: none; }
.swagger-ui .topbar .topbar-wrapper img { height: 40px; }
.swagger-ui .wrapper { max-width: 1180px; }
.swagger-ui .info { margin: 32px 0 24px; }
.swagger-ui .info .title { color: #0f5132; }
.swagger-ui .info .description, .swagger-ui .markdown p, .swagger-ui .markdown li, .swagger-ui .renderedMarkdown p {
  font-size: 15px; line-height: 1.6; color: #1f2937;
}
.swagger-ui .markdown code, .swagger-ui .renderedMarkdown code { background: #ecfdf5; color: #065f46; padding: 1px 4px; border-radius: 4px; }
.swagger-ui .opblock { border-radius: 8px; box-shadow: none; }
.swagger-ui .opblock .opblock-summary-operation-id { font-size: 13px; color: #4b5563; }
.swagger-ui .opblock-tag { border-bottom-color: #d1fae5; }
.swagger-ui .btn.authorize { border-color: #059669; color: #059669; }
.swagger-ui .btn.authorize svg { fill: #059669; }
.swagger-ui table tbody tr td, .swagger-ui .parameter__name { font-size: 14px; }
`;

/** @fastify/swagger-ui options: Waytrack's name, logo, favicon and styles over Swagger UI. */
export const DOCS_UI: FastifySwaggerUiOptions = {
  routePrefix: '/docs',
  staticCSP: true,
  logo: { type: 'image/svg+xml', content: Buffer.from(LOGO_SVG), href: '/docs' },
  theme: {
    title: 'Waytrack API reference',
    css: [{ filename: 'waytrack.css', content: DOCS_CSS }],
    favicon: [{ filename: 'favicon.svg', rel: 'icon', type: 'image/svg+xml', sizes: 'any', content: FAVICON_SVG }],
  },
  uiConfig: {
    docExpansion: 'list',
    deepLinking: true,
    displayOperationId: true,
    defaultModelsExpandDepth: 0,
    displayRequestDuration: true,
  },
};
