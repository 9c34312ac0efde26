// `node|deno run test/support/export-probe-main.ts`: the probe's digest as one JSON line.
import { probe } from './export-probe.ts';

console.log(JSON.stringify(await probe()));
