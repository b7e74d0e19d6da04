import { useApp } from '../app-state.js';
import { CopyButton } from './copy-button.js';

/** The browser tag for a page of the shop (api.md §6), with this server's address. */
export function tagSnippet(host: string, key: string): string {
  return `<script async src="https://${host}/tag.js" data-key="${key}"></script>`;
}

/**
 * A store's tag snippet. It needs the full publishable key of the store, which the dashboard
 * holds only right after creating one here: until then the snippet shows a placeholder, says
 * so (naming the key the store already has, if any) and offers no "Copy snippet" of it.
 * `existingHint`: the hint of the store's newest publishable key in this mode; `undefined`
 * while the keys are loading, `null` when it has none.
 */
export function TagSnippet({ publishableKey, existingHint }: { publishableKey?: string; existingHint?: string | null }) {
  const { mode } = useApp();
  const placeholder = `wt_pk_${mode}_…`;
  const snippet = tagSnippet(location.host, publishableKey ?? placeholder);
  return (
    <div class="snippet">
      <label for="tag-snippet">Tag snippet</label>
      <textarea
        id="tag-snippet"
        readOnly
        rows={3}
        value={snippet}
        aria-describedby={publishableKey ? undefined : 'tag-snippet-key'}
        onFocus={(e) => e.currentTarget.select()}
      />
      {publishableKey ? (
        <CopyButton text={snippet} label="Copy snippet" />
      ) : (
        <p class="warning" id="tag-snippet-key">
          {existingHint === undefined ? (
            <>
              <code>{placeholder}</code> is a placeholder, not a key.
            </>
          ) : existingHint === null ? (
            <>
              This store has no {mode} publishable key yet, and the snippet does not work without one: <code>{placeholder}</code>{' '}
              is a placeholder. Create the key below and it is put into the snippet.
            </>
          ) : (
            <>
              The snippet needs this store's {mode} publishable key {existingHint}, shown in full only when it was created:
              replace <code>{placeholder}</code> with it, or create a new key below.
            </>
          )}
        </p>
      )}
    </div>
  );
}
