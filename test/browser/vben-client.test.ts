// The vben harness's lockfile surgery, without a browser or the network: a locked version the
// registry lacks is swapped for another one everywhere pnpm looks, or the install stops saying why.
import { describe, expect, test } from 'bun:test';
import { InstallError, missingTarball, swapLockedVersion } from './support/vben-client.ts';

const LOCK = `lockfileVersion: '9.0'

catalogs:
  default:
    '@v-c/util':
      specifier: ^1.0.21
      version: 1.0.21

importers:

  .:
    dependencies:
      '@v-c/util':
        specifier: 'catalog:'
        version: 1.0.21(vue@3.5.40)
      other:
        specifier: ^2.0.0
        version: 2.0.0

packages:

  '@v-c/util@1.0.21':
    resolution: {integrity: sha512-old}
    peerDependencies:
      vue: ^3.5.40

  dayjs@1.11.21:
    resolution: {integrity: sha512-dayjs}

  other@2.0.0:
    resolution: {integrity: sha512-other}

snapshots:

  '@v-c/util@1.0.21(vue@3.5.40)':
    dependencies:
      dayjs: 1.11.21
      gone: 1.0.0
    transitivePeerDependencies:
      - vue

  dayjs@1.11.21: {}

  other@2.0.0:
    dependencies:
      '@v-c/util': 1.0.21(vue@3.5.40)
`;

const manifest = (deps: Record<string, string>) => ({ dependencies: deps, peerDependencies: { vue: '>=3.2.0' }, dist: { integrity: 'sha512-new' } });

describe('vben harness: swapping a locked version', () => {
  test('every reference, the packages entry and the snapshot follow; dependencies come from the new manifest', async () => {
    const out = await swapLockedVersion(LOCK, '@v-c/util', '1.0.21', '1.0.19', manifest({ dayjs: '^1.11.0' }), 'http://registry.invalid/', true);
    expect(out).not.toContain('1.0.21');
    expect(out).toContain("    '@v-c/util':\n      specifier: 1.0.19\n      version: 1.0.19\n");
    expect(out).toContain("        specifier: 'catalog:'\n        version: 1.0.19(vue@3.5.40)\n");
    expect(out).toContain("  '@v-c/util@1.0.19':\n    resolution: {integrity: sha512-new}\n    peerDependencies:\n      vue: '>=3.2.0'\n");
    // The old dependency that the new version no longer has is gone; the peer context is kept.
    expect(out).toContain("  '@v-c/util@1.0.19(vue@3.5.40)':\n    dependencies:\n      dayjs: 1.11.21\n    transitivePeerDependencies:\n      - vue\n");
    expect(out).not.toContain('gone');
    expect(out).toContain("  other@2.0.0:\n    dependencies:\n      '@v-c/util': 1.0.19(vue@3.5.40)\n");
    // Untouched entries stay as they were.
    expect(out).toContain('  dayjs@1.11.21:\n    resolution: {integrity: sha512-dayjs}\n');
  });

  test('a dependency range the lockfile cannot satisfy stops the install with the reason', async () => {
    const swap = swapLockedVersion(LOCK, '@v-c/util', '1.0.21', '1.0.19', manifest({ dayjs: '^2.0.0' }), 'http://registry.invalid/', false);
    await expect(swap).rejects.toBeInstanceOf(InstallError);
    await expect(swap).rejects.toThrow('needs dayjs@^2.0.0');
  });

  test('a catalog entry that is not there as expected stops the install (another tarball)', async () => {
    const swap = swapLockedVersion(LOCK.replace('specifier: ^1.0.21', 'specifier: ^1.0.20'), '@v-c/util', '1.0.21', '1.0.19', manifest({}), 'http://registry.invalid/', true);
    await expect(swap).rejects.toThrow('expected 1 match(es)');
  });

  test("pnpm's 404 for a tarball names the package and version", () => {
    expect(missingTarball('[ERR_PNPM_FETCH_404] GET https://example.invalid/@v-c/overflow/-/overflow-1.1.1.tgz: Not Found - 404')).toEqual({ name: '@v-c/overflow', version: '1.1.1' });
    expect(missingTarball('[ERR_PNPM_FETCH_404] GET https://example.invalid/es-toolkit/-/es-toolkit-1.45.1.tgz: Not Found - 404')).toEqual({ name: 'es-toolkit', version: '1.45.1' });
    expect(missingTarball('[ERR_PNPM_FETCH_404] GET https://example.invalid/a/-/b-1.0.0.tgz')).toBeNull();
    expect(missingTarball('ERR_PNPM_OUTDATED_LOCKFILE')).toBeNull();
  });
});
