// A tiny Worker for measuring argon2id in workerd: workerd stops its clocks during pure CPU work,
// so the bench times each request from outside (bench/workerd-argon2/run.ts).
import argon2Wasm from 'argon2-wasm-edge/wasm/argon2.wasm';
import blake2bWasm from 'argon2-wasm-edge/wasm/blake2b.wasm';
import { useCompiledWasm, wasmArgon2Hasher } from '../../src/adapters/workers/argon2-wasm.ts';

const hasher = wasmArgon2Hasher();
let stored: Promise<string> | undefined;

export default {
  async fetch(request: Request): Promise<Response> {
    await useCompiledWasm({ argon2: argon2Wasm, blake2b: blake2bWasm });
    const path = new URL(request.url).pathname;
    if (path === '/hash') return new Response(await hasher.hash('Correct-Horse-42'));
    if (path === '/verify') {
      stored ??= hasher.hash('Correct-Horse-42');
      return new Response(String(await hasher.verify(await stored, 'Correct-Horse-42')));
    }
    return new Response('noop');
  },
};
