import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Mode } from './api.js';
import type { SessionInfo } from './types.js';

/** What every page of a signed-in owner shares: who they are and which mode's data they see. */
export interface AppState {
  session: SessionInfo;
  mode: Mode;
  setMode(mode: Mode): void;
  signOut(): Promise<void>;
}

export const AppContext = createContext<AppState | null>(null);

export function useApp(): AppState {
  const state = useContext(AppContext);
  if (!state) throw new Error('useApp outside the signed-in app');
  return state;
}

const MODE_KEY = 'waytrack.mode';

/** The Test mode switch survives reloads and new tabs (it is a view preference, not a secret). */
export function savedMode(): Mode {
  try {
    return localStorage.getItem(MODE_KEY) === 'test' ? 'test' : 'live';
  } catch {
    return 'live';
  }
}

export function saveMode(mode: Mode): void {
  try {
    localStorage.setItem(MODE_KEY, mode);
  } catch {
    // Private windows may refuse storage: the switch still works for this page.
  }
}
