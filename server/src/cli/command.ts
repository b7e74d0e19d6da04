import type { Config } from '../config.js';

/**
 * The command line's tables (api.md's CLI): every command and option is declared once, in
 * commands.ts; the parser, the checks (required options, allowed values, which options go together)
 * and the `--help` text (parse.ts, help.ts) are all made from these tables, so the help cannot
 * drift from what the commands accept.
 */

export type Values = Record<string, string | boolean | undefined>;

export interface Option {
  type: 'string' | 'boolean';
  /** How the value is shown in help (`--account ID`); `choices` show as `live|test`. */
  value?: string;
  /** The only values accepted. */
  choices?: readonly string[];
  /** Required in the command's one form (commands with several forms say it per form). */
  required?: boolean;
  help: string;
}

/** One way to call a command: keys create makes a secret key, or with --publishable a browser key. */
export interface Form {
  required: string[];
  optional: string[];
  /** Why an option of another form is refused in this one (default: a generic message). */
  refuse?: Record<string, string>;
}

export interface Command {
  /** The words that name it: `keys create`. */
  name: string;
  /** Positional arguments, all required: `KEY_ID`. */
  args?: string[];
  summary: string;
  /** More lines for `waytrack <command> --help`. */
  details?: string[];
  options: Record<string, Option>;
  forms?: Form[];
  run(input: { config: Config; values: Values; args: string[] }): Promise<void>;
}

export class UsageError extends Error {
  /** The command whose help the message points to (top-level help when undefined). */
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
  }
}

export const json: Option = { type: 'boolean', help: 'print JSON (one value) instead of text' };
export const mode: Option = {
  type: 'string',
  choices: ['live', 'test'],
  help: 'live or test data (a key of one mode never sees the other)',
};

export const ENVIRONMENT = [
  'Configuration comes from the environment, the same for every command: PORT (8443), HOST, HTTP_PORT,',
  'DATA_DIR (./data), DATABASE_URL, REDIS_URL, TLS_CERT/TLS_KEY, SECRETS_KEY, LOG_LEVEL, ... (README.md).',
];
