#!/usr/bin/env node
// Generates TypeScript types for the API with openapi-typescript:
//   node tools/codegen/generate.mjs <openapi.json URL or file> <output .d.ts>
// It is `npx openapi-typescript <input> -o <output> --default-non-nullable false` plus one
// transform: `format: binary` (the multipart `file` of the upload operations) becomes `Blob`
// instead of `string`, so an upload body can be typed without a cast.
// Lives in its own workspace because openapi-typescript needs TypeScript 5's compiler API.
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  console.error('usage: node tools/codegen/generate.mjs <openapi.json URL or file> <output .d.ts>');
  process.exit(2);
}
const source = /^https?:/.test(input) ? new URL(input) : pathToFileURL(input);
const BLOB = ts.factory.createTypeReferenceNode('Blob');
const ast = await openapiTS(source, {
  // Fields with a default (pageNo, pageSize, sortOrder, …) stay optional in request bodies.
  defaultNonNullable: false,
  transform(schema) {
    if (schema.format === 'binary') return BLOB;
  },
});
writeFileSync(output, astToString(ast));
