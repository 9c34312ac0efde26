// Shared by the browser tests: Debian's Chromium through playwright-core (never a downloaded
// browser), and the real Bun entry started as `npm start` would, on a free port with its own data.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
export const ROOT = resolve(import.meta.dir, '../..');
export const OUTPUT_DIR = join(ROOT, 'test-output');
export const ADMIN_PASSWORD = 'Browser-Test-Pass-42';

/** A describe title that, when Chromium is missing, carries why its tests are skipped. */
export function inChromium(title: string): string {
  return hasChromium ? title : `${title} (skipped: ${CHROMIUM} is missing; apt-get install -y chromium, as .ci/run does as root)`;
}

/** Headless Chromium with a fresh profile directory, removed again by close(). */
export async function launchChromium() {
  const profile = mkdtempSync(join(tmpdir(), 'edge-admin-chromium-'));
  const context: BrowserContext = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1100, height: 760 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    async close() {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** A port nobody listens on right now (the OS picks it). */
export function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  return port;
}

export interface RunningApi {
  url: string;
  dir: string;
  stop(): Promise<void>;
  /** The server's stdout lines so far (its JSON log), when started with `keepOutput`. */
  output(): string[];
  /** Plain server-side call (no browser, so no CORS): for test setup. */
  call(method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; json: any }>;
  login(): Promise<string>;
}

/**
 * Starts `bun src/entry/bun.ts` with a temporary database and files folder. With `keepOutput`
 * its stdout (the JSON log, e.g. one line per request with LOG_REQUESTS=true) is read as it comes
 * and kept for output(); otherwise it is discarded.
 */
export async function startApi(env: Record<string, string>, opts: { keepOutput?: boolean } = {}): Promise<RunningApi> {
  // The free port is only free when probed; on the rare lost race, try another one.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startApiOnce(env, opts.keepOutput ?? false);
    } catch (e) {
      if (attempt === 3) throw e;
    }
  }
}

async function startApiOnce(env: Record<string, string>, keepOutput: boolean): Promise<RunningApi> {
  const dir = mkdtempSync(join(tmpdir(), 'edge-admin-api-'));
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc = Bun.spawn([process.execPath, 'src/entry/bun.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? tmpdir(),
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_PATH: join(dir, 'admin.db'),
      FILES_DIR: join(dir, 'files'),
      ADMIN_PASSWORD,
      LOG_LEVEL: 'warn',
      LOG_REQUESTS: 'false',
      ...env,
    },
    stdout: keepOutput ? 'pipe' : 'ignore',
    stderr: 'pipe',
  });
  const lines: string[] = [];
  if (keepOutput) void drainLines(proc.stdout as ReadableStream<Uint8Array>, lines);

  const deadline = Date.now() + 15_000;
  for (;;) {
    if (proc.exitCode !== null) {
      const err = await new Response(proc.stderr).text();
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`API exited with ${proc.exitCode}: ${err}`);
    }
    const up = await fetch(`${url}/health`).then((r) => r.ok, () => false);
    if (up) break;
    if (Date.now() > deadline) {
      proc.kill();
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
      throw new Error('API did not answer /health within 15 s');
    }
    await Bun.sleep(50);
  }

  async function call(method: string, path: string, body?: unknown, token?: string) {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (token) headers.authorization = `Bearer ${token}`;
    const res = await fetch(url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, json: await res.json() };
  }

  return {
    url,
    dir,
    call,
    output: () => [...lines],
    async login() {
      const r = await call('POST', '/auth/login', { loginName: 'admin', password: ADMIN_PASSWORD });
      if (r.status !== 200) throw new Error(`login failed: ${r.status} ${r.json.msg}`);
      return r.json.data.token as string;
    },
    async stop() {
      proc.kill();
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Reads a stream to its end (so the child never blocks on a full pipe), one entry per line. */
async function drainLines(stream: ReadableStream<Uint8Array>, into: string[]) {
  const decoder = new TextDecoder();
  let rest = '';
  for await (const chunk of stream) {
    rest += decoder.decode(chunk, { stream: true });
    const parts = rest.split('\n');
    rest = parts.pop()!;
    into.push(...parts.filter(Boolean));
  }
  if (rest) into.push(rest);
}

export function outputPath(name: string) {
  mkdirSync(OUTPUT_DIR, { recursive: true });
  return join(OUTPUT_DIR, name);
}
