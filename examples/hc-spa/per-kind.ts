// Compile-time checks, type-checked with session.ts under the same browser-only tsconfig
// (test/hc-browser.test.ts): every sysFile answer is exactly a FileRecord and every sysImage answer
// exactly an ImageRecord. A regression to the file-or-image union (one route factory whose lookup
// widens per-kind types) fails the `Same` checks; a file route typed as an image fails the
// `@ts-expect-error` lines (they must stay errors).
import type { InferResponseType } from 'hono/client';
import type { Client, FileRecord, ImageRecord } from '../../src/client.ts';

/** `true` only when A and B are the same type (not merely assignable either way). */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Data<F extends (...args: never[]) => unknown> = InferResponseType<F, 200>['data'];
type Files = Client['app']['sysFile'];
type Images = Client['app']['sysImage'];

export const fileAnswers: [
  Same<Data<Files['upload']['$post']>, FileRecord>,
  Same<Data<Files['detail']['$get']>, FileRecord>,
  Same<Data<Files['page']['$post']>['records'][number], FileRecord>,
] = [true, true, true];

export const imageAnswers: [
  Same<Data<Images['upload']['$post']>, ImageRecord>,
  Same<Data<Images['detail']['$get']>, ImageRecord>,
  Same<Data<Images['page']['$post']>['records'][number], ImageRecord>,
] = [true, true, true];

export function sizes(file: Data<Files['detail']['$get']>, image: Data<Images['detail']['$get']>): number[] {
  // @ts-expect-error a file record has no width
  const w: unknown = file.width;
  // @ts-expect-error nor height
  const h: unknown = file.height;
  return [image.width, image.height, Number(w ?? 0), Number(h ?? 0)];
}
