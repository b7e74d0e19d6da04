// A fresh dist on every build, so no file of a renamed or deleted source lingers in the package.
import { rmSync } from 'node:fs';

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
