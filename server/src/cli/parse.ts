import { parseArgs } from 'node:util';
import { type Command, type Form, UsageError, type Values } from './command.js';
import { formsOf, synopses } from './help.js';

export function parse(command: Command, rest: string[]): { values: Values; args: string[]; help: boolean } {
  const spec: Record<string, { type: 'string' | 'boolean'; short?: string }> = { help: { type: 'boolean', short: 'h' } };
  for (const [name, option] of Object.entries(command.options)) spec[name] = { type: option.type };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: rest, options: spec, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(parseErrorMessage(error as Error & { code?: string }, rest), command.name);
  }
  const { help, ...values } = parsed.values as Values;
  return { values, args: parsed.positionals, help: help === true };
}

/** parseArgs' messages run to several sentences; the one line a person needs instead. */
function parseErrorMessage(error: Error & { code?: string }, rest: string[]): string {
  const flag = /'(-[^']*)'/.exec(error.message)?.[1];
  switch (error.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${flag ?? rest.find((a) => a.startsWith('-'))}`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return /argument missing/.test(error.message)
        ? `${/'(--?\w[\w-]*)/.exec(error.message)?.[1] ?? 'an option'} needs a value`
        : (error.message.split('. ')[0] as string);
    default:
      return error.message.split('. ')[0] as string;
  }
}

/** The form the options name (a form that requires a flag applies when that flag is given). */
function chooseForm(command: Command, values: Values): Form {
  const forms = formsOf(command);
  const flagged = forms.find((f) => f.required.some((n) => command.options[n]?.type === 'boolean' && values[n] === true));
  return flagged ?? (forms.find((f) => !f.required.some((n) => command.options[n]?.type === 'boolean')) as Form);
}

export function check(command: Command, values: Values, args: string[]): void {
  const form = chooseForm(command, values);
  for (const name of Object.keys(values)) {
    if (values[name] === undefined || form.required.includes(name) || form.optional.includes(name)) continue;
    throw new UsageError(
      form.refuse?.[name] ?? `--${name} does not go with ${synopses(command).length > 1 ? 'this form of ' : ''}${command.name}`,
      command.name,
    );
  }
  for (const name of form.required) {
    const value = values[name];
    if (value === undefined || value === '') throw new UsageError(`--${name} is required`, command.name);
  }
  for (const [name, option] of Object.entries(command.options)) {
    const value = values[name];
    if (option.choices && typeof value === 'string' && !option.choices.includes(value)) {
      throw new UsageError(`--${name} must be ${option.choices.join(' or ')}`, command.name);
    }
  }
  const expected = command.args ?? [];
  if (args.length < expected.length) throw new UsageError(`${expected[args.length]} is required`, command.name);
  if (args.length > expected.length) throw new UsageError(`unexpected argument "${args[expected.length]}"`, command.name);
}
