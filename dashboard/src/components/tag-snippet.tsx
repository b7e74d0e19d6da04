import { useApp } from '../app-state.js';
import { CopyButton } from './copy-button.js';

/** The browser tag for a page of the shop (api.md §6), with this server's address. */
export function tagSnippet(host: string, key: string): string {
  return `<script async src="https://${host}/tag.js" data-key="${key}"></script>`;
}

/**
 * A store's tag snippet, ready to copy. It needs a publishable key of the store: the full key
 * when one was just created here, otherwise a placeholder to replace with the key saved then.
 */
export function TagSnippet({ publishableKey }: { publishableKey?: string }) {
  const { mode } = useApp();
  const snippet = tagSnippet(location.host, publishableKey ?? `wt_pk_${mode}_…`);
  return (
    <div class="snippet">
      <label for="tag-snippet">Tag snippet</label>
      <textarea id="tag-snippet" readOnly rows={3} value={snippet} onFocus={(e) => e.currentTarget.select()} />
      <CopyButton text={snippet} label="Copy snippet" />
    </div>
  );
}
