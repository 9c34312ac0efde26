/**
 * A small User-Agent reader for the login log and online sessions: browser and OS family with a
 * major version. Order matters: Edge and Opera also claim Chrome, Chrome also claims Safari.
 */
const BROWSERS: [RegExp, string][] = [
  [/Edg(?:e|A|iOS)?\/(\d+)/, 'Edge'],
  [/OPR\/(\d+)/, 'Opera'],
  [/SamsungBrowser\/(\d+)/, 'Samsung Internet'],
  [/Firefox\/(\d+)/, 'Firefox'],
  [/FxiOS\/(\d+)/, 'Firefox'],
  [/CriOS\/(\d+)/, 'Chrome'],
  [/HeadlessChrome\/(\d+)/, 'Headless Chrome'],
  [/Chrom(?:e|ium)\/(\d+)/, 'Chrome'],
  [/Version\/(\d+)[\d.]* (?:Mobile\/\S+ )?Safari\//, 'Safari'],
  [/MSIE (\d+)/, 'Internet Explorer'],
  [/Trident\/.*rv:(\d+)/, 'Internet Explorer'],
  [/curl\/(\d+)/, 'curl'],
  [/PostmanRuntime\/(\d+)/, 'Postman'],
  [/Bun\/(\d+)/, 'Bun'],
  [/node(?:-fetch)?\/?(\d*)/i, 'Node.js'],
];

const SYSTEMS: [RegExp, string, ((m: RegExpMatchArray) => string)?][] = [
  [/Windows NT 10\.0/, 'Windows 10/11'],
  [/Windows NT 6\.3/, 'Windows 8.1'],
  [/Windows NT 6\.1/, 'Windows 7'],
  [/Windows/, 'Windows'],
  [/iPhone OS (\d+)/, 'iOS', (m) => `iOS ${m[1]}`],
  [/iPad.*OS (\d+)/, 'iPadOS', (m) => `iPadOS ${m[1]}`],
  [/Android (\d+)/, 'Android', (m) => `Android ${m[1]}`],
  [/CrOS/, 'Chrome OS'],
  [/Mac OS X (\d+)[._](\d+)/, 'macOS', (m) => `macOS ${m[1]}.${m[2]}`],
  [/Macintosh/, 'macOS'],
  [/Linux/, 'Linux'],
];

export function parseUserAgent(ua: string | undefined | null): { browser: string; os: string } {
  const s = (ua ?? '').slice(0, 512);
  let browser = 'Unknown';
  for (const [re, name] of BROWSERS) {
    const m = s.match(re);
    if (m) {
      browser = m[1] ? `${name} ${m[1]}` : name;
      break;
    }
  }
  let os = 'Unknown';
  for (const [re, name, fmt] of SYSTEMS) {
    const m = s.match(re);
    if (m) {
      os = fmt ? fmt(m) : name;
      break;
    }
  }
  return { browser, os };
}
