/**
 * npx tsx scripts/bench/profile-summary.ts FILE.cpuprofile [TOP]: where a receiver's CPU went while it served
 * requests (BENCH_PROFILE=1 writes the profiles). Start-up (the seed) and idle time are left out: the window
 * opens at the first sample inside Node's HTTP server. Prints the share of each module (self time) and the top
 * functions by self and by total time (a function counted once per stack, however deep it recurs).
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const NOT_WORK = new Set(['(idle)', '(program)']);

/** The module a frame belongs to: a package, a file of the receiver, one of Node's own, or V8's. */
function moduleOf({ functionName, url }: ProfileNode['callFrame']): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  const packageMatch = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (packageMatch) return packageMatch[1];
  const own = /\/dist\/(.+)$/.exec(url);
  return own ? own[1] : url;
}

function label(frame: ProfileNode['callFrame']): string {
  return `${frame.functionName || '(anonymous)'} ${moduleOf(frame)}:${frame.lineNumber + 1}`;
}

function summarize(profile: CpuProfile, top: number): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const stackOf = (id: number): ProfileNode[] => {
    const stack: ProfileNode[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) stack.push(byId.get(at) as ProfileNode);
    return stack;
  };
  const serving = (stack: ProfileNode[]) => stack.some((node) => node.callFrame.url === 'node:_http_server');
  const opened = profile.samples.findIndex((id) => serving(stackOf(id)));
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  const modules = new Map<string, number>();
  let work = 0;
  for (let i = Math.max(opened, 0); i < profile.samples.length; i += 1) {
    const micros = profile.timeDeltas[i + 1] ?? 0;
    const stack = stackOf(profile.samples[i]);
    const leaf = stack[0].callFrame;
    if (NOT_WORK.has(leaf.functionName)) continue;
    work += micros;
    self.set(label(leaf), (self.get(label(leaf)) ?? 0) + micros);
    modules.set(moduleOf(leaf), (modules.get(moduleOf(leaf)) ?? 0) + micros);
    for (const name of new Set(stack.map((node) => label(node.callFrame)))) total.set(name, (total.get(name) ?? 0) + micros);
  }
  const share = (micros: number) => `${((100 * micros) / work).toFixed(1).padStart(5)}%`;
  const ranked = (map: Map<string, number>, count: number) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([name, micros]) => `  ${share(micros)}  ${name}`)
      .join('\n');
  return [
    `serving: ${(work / 1e6).toFixed(2)} s of CPU sampled (start-up and idle left out)`,
    `by module (self):\n${ranked(modules, top)}`,
    `by function (self):\n${ranked(self, top)}`,
    `by function (total):\n${ranked(total, top)}`,
  ].join('\n');
}

const [file, top = '25'] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: tsx scripts/bench/profile-summary.ts FILE.cpuprofile [TOP]\n');
  process.exit(2);
}
process.stdout.write(`${summarize(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, Number(top))}\n`);
