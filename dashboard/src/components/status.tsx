import type { ComponentChildren } from 'preact';
import type { ApiError } from '../api.js';

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p class="loading" role="status">
      {label}
    </p>
  );
}

/** An error the owner can act on: the server's own message, and a way to try again. */
export function ErrorMessage({ error, retry }: { error: ApiError; retry?: () => void }) {
  return (
    <div class="error" role="alert">
      <p>{error.message}</p>
      {retry && (
        <button type="button" class="secondary" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  );
}

/** An empty list says what to do next. */
export function Empty({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <div class="empty">
      <h2>{title}</h2>
      {children}
    </div>
  );
}
