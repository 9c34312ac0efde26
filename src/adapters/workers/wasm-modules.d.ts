// wrangler bundles `import x from '….wasm'` as a precompiled WebAssembly.Module.
declare module '*.wasm' {
  const module: WebAssembly.Module;
  export default module;
}
