// The Cloudflare Workers entry (wrangler.toml `main`): the same createApp as on Bun, over D1.
// wrangler bundles these `.wasm` imports as precompiled modules; workerd cannot compile at run time.
import argon2 from 'argon2-wasm-edge/wasm/argon2.wasm';
import blake2b from 'argon2-wasm-edge/wasm/blake2b.wasm';
import { createWorker } from './worker-handler.ts';

export default createWorker({ wasm: { argon2, blake2b } });
