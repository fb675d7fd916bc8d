/**
 * The worker thread of readSeedFileApart (file.ts): reads and checks the seed file, then hands the result
 * over with its tokens in columns. Parsing a large file makes several times its size in short-lived objects;
 * here they live and die in this thread's heap, which is given back whole when the thread ends.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { readSeedFile, SeedFileError } from './file';
import { movedBuffers, toColumns, type SeedWorkerAnswer } from './transfer';

const { file } = workerData as { file: string };
let answer: SeedWorkerAnswer;
let moved: ArrayBuffer[] = [];
try {
  const { accounts, tokens, bookings, publishedKeys, endpoints } = readSeedFile(file);
  const columns = toColumns(tokens);
  moved = movedBuffers(columns);
  answer = { seed: { accounts, bookings, tokens: columns, publishedKeys, endpoints } };
} catch (error) {
  // A seed problem is the operator's to fix and is shown as its message; anything else is a fault, with its stack.
  answer =
    error instanceof SeedFileError
      ? { error: error.message, problems: error.problems }
      : { error: String((error as Error)?.stack ?? error) };
}
parentPort?.postMessage(answer, moved);
