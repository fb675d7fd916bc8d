import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * package.json's start script as what it gives node: `NAME=${NAME:-value} … exec node ARGUMENTS`. The bench starts
 * the receivers this way, and test/unit/runtime.test.ts holds the image's ENV and CMD to it: one reading for both.
 */
export interface StartCommand {
  /** The environment it sets when the caller's does not: NAME to value. */
  environmentDefaults: Record<string, string>;
  /** What it execs: node, its flags and the script. */
  command: string[];
  /** The flags it gives node, for a tool that starts the receiver as npm start does. */
  nodeFlags: string[];
}

export function startCommand(root: string): StartCommand {
  const { start } = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts;
  const execAt = start.indexOf('exec ');
  if (execAt === -1) throw new Error(`npm start does not exec node: ${start}`);
  const defaults = start.slice(0, execAt);
  const command = start.slice(execAt + 'exec '.length).split(' ');
  return {
    environmentDefaults: Object.fromEntries([...defaults.matchAll(/(\w+)=\$\{\1:-([^}]+)\}/g)].map(([, name, value]) => [name, value])),
    command,
    nodeFlags: command.filter((argument) => argument.startsWith('--')),
  };
}
