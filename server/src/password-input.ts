/**
 * Reads a password for the CLI (`waytrack account password`). At a terminal it is typed
 * without echo (nothing shows, not even stars: the length is not shown either) and asked twice;
 * otherwise (a pipe, a file, a script) it is the first line of standard input. Prompts go to
 * standard error, so standard output carries only the command's result.
 */

export class PasswordInputError extends Error {}

interface TerminalInput extends NodeJS.ReadableStream {
  isTTY?: boolean;
  setRawMode?(mode: boolean): unknown;
}

const CTRL_C = '\u0003';
const CTRL_D = '\u0004';
const BACKSPACE = new Set(['\u007f', '\b']);

/** One line typed at the terminal in raw mode: the characters are read, never echoed. */
function typeSilently(input: TerminalInput, output: NodeJS.WritableStream, prompt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let typed = '';
    const finish = (error?: Error) => {
      input.removeListener('data', onData);
      input.setRawMode?.(false);
      input.pause();
      output.write('\n');
      if (error) reject(error);
      else resolve(typed);
    };
    const onData = (chunk: Buffer | string) => {
      for (const char of chunk.toString('utf8')) {
        if (char === '\r' || char === '\n') return finish();
        if (char === CTRL_C) return finish(new PasswordInputError('cancelled'));
        if (char === CTRL_D) {
          if (typed === '') return finish(new PasswordInputError('no password typed'));
          return finish();
        }
        if (BACKSPACE.has(char)) typed = typed.slice(0, -1);
        else if (char >= ' ') typed += char;
      }
    };
    // Echo off first: whatever is typed once the prompt shows is never displayed.
    input.setRawMode?.(true);
    output.write(prompt);
    input.resume();
    input.on('data', onData);
  });
}

/** The first line of a non-terminal input (a trailing \r\n or \n is not part of it). */
async function firstLine(input: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of input) {
    text += chunk.toString();
    if (text.includes('\n')) break;
  }
  const line = text.split('\n')[0]?.replace(/\r$/, '') ?? '';
  if (line === '') throw new PasswordInputError('no password on standard input (give it on the first line)');
  return line;
}

/**
 * `check` refuses a password that would be refused anyway (too short): at a terminal it runs
 * after the first entry, so nobody types a refused password twice.
 */
export async function readPassword(
  check: (password: string) => void = () => {},
  input: TerminalInput = process.stdin,
  output: NodeJS.WritableStream = process.stderr,
): Promise<string> {
  if (!input.isTTY) {
    const line = await firstLine(input);
    check(line);
    return line;
  }
  const password = await typeSilently(input, output, 'New dashboard password: ');
  if (password === '') throw new PasswordInputError('no password typed');
  check(password);
  // Nothing was shown while typing: a second entry catches a typo.
  const again = await typeSilently(input, output, 'Repeat the password: ');
  if (again !== password) throw new PasswordInputError('the two passwords differ; nothing was changed');
  return password;
}
