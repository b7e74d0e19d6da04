// dist/cjs holds CommonJS, but this package is "type": "module": a package.json there says otherwise.
import { writeFileSync } from 'node:fs';

writeFileSync(new URL('../dist/cjs/package.json', import.meta.url), '{ "type": "commonjs" }\n');
