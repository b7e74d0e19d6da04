import { useState } from 'preact/hooks';

/** Copies `text`; says so in a polite live region (a screen reader hears it, nobody is interrupted). */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
  };
  return (
    <span class="copy">
      <button type="button" class="secondary" onClick={copy}>
        {label}
      </button>
      <span aria-live="polite" class="hint">
        {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed: select the text and copy it yourself' : ''}
      </span>
    </span>
  );
}
