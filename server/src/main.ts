import { UsageError } from './cli/command.js';
import { COMMANDS } from './cli/commands.js';
import { commandHelp, groupHelp, mainHelp, version } from './cli/help.js';
import { check, parse } from './cli/parse.js';
import { loadConfig } from './config.js';

/** `waytrack`: the command named by argv (cli/commands.ts), its help, or the help of all of them. */

const GROUPS = [...new Set(COMMANDS.filter((c) => c.name.includes(' ')).map((c) => c.name.split(' ')[0] as string))];

export async function run(argv: string[]): Promise<void> {
  const [first, second] = argv;
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    const topic = argv.slice(1).filter((a) => !a.startsWith('-'));
    if (first === 'help' && topic.length > 0) return run([...topic, '--help']);
    console.log(mainHelp(COMMANDS));
    return;
  }
  if (first === '--version' || first === '-v') {
    console.log(version());
    return;
  }
  if (first.startsWith('-')) throw new UsageError(`unknown option ${first}`);
  const command = COMMANDS.find((c) => c.name === first) ?? COMMANDS.find((c) => c.name === `${first} ${second}`);
  if (!command) {
    if (GROUPS.includes(first)) {
      if (second === '--help' || second === '-h') {
        console.log(groupHelp(COMMANDS, first));
        return;
      }
      const subcommands = COMMANDS.filter((c) => c.name.startsWith(`${first} `)).map((c) => c.name.split(' ')[1]);
      if (second === undefined) throw new UsageError(`"${first}" needs a command: ${subcommands.join(', ')}`, first);
      throw new UsageError(`unknown command "${first} ${second}"`, first);
    }
    throw new UsageError(`unknown command "${first}"`);
  }
  const rest = argv.slice(command.name.split(' ').length);
  const { values, args, help } = parse(command, rest);
  if (help) {
    console.log(commandHelp(command));
    return;
  }
  check(command, values, args);
  await command.run({ config: loadConfig(), values, args });
}

run(process.argv.slice(2)).catch((error: unknown) => {
  // Usage errors point to the help to read; every other failure (configuration, an account or a
  // key that does not exist, a refused restore, ...) is its own message.
  if (error instanceof UsageError) {
    console.error(`waytrack: ${error.message} (see \`waytrack ${error.command ? `${error.command} ` : ''}--help\`)`);
  } else {
    console.error(`waytrack: ${(error as Error | undefined)?.message ?? error}`);
  }
  process.exit(1);
});
