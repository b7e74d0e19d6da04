import { readFileSync } from 'node:fs';
import { SERVER_PACKAGE } from '../paths.js';
import { type Command, ENVIRONMENT, type Form, type Option } from './command.js';

export function version(): string {
  const pkg = JSON.parse(readFileSync(SERVER_PACKAGE, 'utf8')) as { version: string };
  return pkg.version;
}

function optionWords(name: string, option: Option): string {
  const value = option.choices ? option.choices.join('|') : option.value;
  return option.type === 'boolean' ? `--${name}` : `--${name} ${value ?? 'VALUE'}`;
}

export function formsOf(command: Command): Form[] {
  if (command.forms) return command.forms;
  const names = Object.keys(command.options);
  return [
    { required: names.filter((n) => command.options[n]?.required), optional: names.filter((n) => !command.options[n]?.required) },
  ];
}

export function synopses(command: Command): string[] {
  return formsOf(command).map((form) => {
    const words = [`waytrack ${command.name}`, ...(command.args ?? [])];
    for (const n of form.required) words.push(optionWords(n, command.options[n] as Option));
    for (const n of form.optional) words.push(`[${optionWords(n, command.options[n] as Option)}]`);
    return words.join(' ');
  });
}

function table(rows: [string, string][]): string[] {
  const width = Math.min(Math.max(...rows.map(([left]) => left.length)), 34);
  return rows.map(([left, right]) =>
    left.length > width ? `  ${left}\n  ${''.padEnd(width)}  ${right}` : `  ${left.padEnd(width)}  ${right}`,
  );
}

export function mainHelp(COMMANDS: Command[]): string {
  return [
    'Usage: waytrack <command> [options]',
    '',
    'Self-hostable conversion tracking and attribution. Commands:',
    ...table(COMMANDS.map((c) => [[c.name, ...(c.args ?? [])].join(' '), c.summary])),
    '',
    'Options:',
    ...table([
      ['-h, --help', "show this help; after a command, that command's options (waytrack keys create --help)"],
      ['-v, --version', 'print the version'],
    ]),
    '',
    ...ENVIRONMENT,
  ].join('\n');
}

export function groupHelp(COMMANDS: Command[], group: string): string {
  const commands = COMMANDS.filter((c) => c.name.startsWith(`${group} `));
  return [
    `Usage: waytrack ${group} <${commands.map((c) => c.name.split(' ')[1]).join('|')}> [options]`,
    '',
    ...table(commands.map((c) => [[c.name, ...(c.args ?? [])].join(' '), c.summary])),
    '',
    `Run \`waytrack ${group} <command> --help\` for a command's options.`,
  ].join('\n');
}

export function commandHelp(command: Command): string {
  const [first, ...others] = synopses(command);
  const options = Object.entries(command.options).map(([name, option]): [string, string] => [
    optionWords(name, option),
    option.help,
  ]);
  return [
    `Usage: ${first}`,
    ...others.map((s) => `       ${s}`),
    '',
    `${command.summary[0]?.toUpperCase()}${command.summary.slice(1)}.`,
    ...(command.details ?? []),
    '',
    'Options:',
    ...table([...options, ['-h, --help', 'show this help']]),
    '',
    ...ENVIRONMENT,
  ].join('\n');
}
