import sanitizeHtml from 'sanitize-html';

/**
 * Rich text as notices may hold it, cleaned by sanitize-html (htmlparser2 underneath: no DOM, the
 * same on Bun, Node, Deno and workerd). The policy, as an allowlist:
 * - tags: p br hr b i u s strike strong em sub sup h1-h6 ul ol li blockquote pre code span a img
 *   (what a rich text editor such as Quill or wangEditor produces); any other tag is dropped, its
 *   text kept, except script, style, iframe, object, embed, form parts, svg, math, template and
 *   the like, whose whole content goes with them;
 * - a: href with http, https or mailto, or a relative link; target only `_blank`; every link gets
 *   rel="noopener noreferrer nofollow";
 * - img: src only a root-relative path of this site (`/app/…`, never `//host`, `/\host`, http(s):
 *   or data:), so a notice never loads a resource from elsewhere nor carries an inline payload;
 *   alt, width and height as plain values; an img with any other src is removed;
 * - style (on p, span, headings, li, blockquote, pre): only color and background-color as #hex,
 *   rgb() or a colour name, text-align, and padding-left in px/em (the editors' indent): no url(),
 *   no expression(), nothing else;
 * - class: only the editors' `ql-…` and `w-e-…` classes;
 * - no other attribute: no on* handler, id, name, srcset, formaction, xlink:href; no comment.
 */

const ALLOWED_TAGS = ['p', 'br', 'hr', 'b', 'i', 'u', 's', 'strike', 'strong', 'em', 'sub', 'sup', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'li', 'blockquote', 'pre', 'code', 'span', 'a', 'img'];
/** Dropped together with everything inside them. */
const DROP_WITH_CONTENT = ['script', 'style', 'textarea', 'option', 'select', 'noscript', 'template', 'iframe', 'frame', 'frameset', 'object', 'embed', 'applet', 'xmp', 'noembed', 'noframes', 'plaintext', 'title', 'svg', 'math', 'head', 'button', 'form', 'audio', 'video', 'canvas', 'map'];
/** A root-relative path: one `/` then no second `/` or `\` (browsers read `/\x` as `//x`), no space or control character. */
export const SAME_ORIGIN_PATH = /^\/(?![/\\])[^\s\\\u0000-\u001F\u007F]*$/;

const COLOUR = [/^#[0-9a-f]{3,8}$/i, /^rgba?\(\s*\d{1,3}%?\s*,\s*\d{1,3}%?\s*,\s*\d{1,3}%?\s*(,\s*(0|1|0?\.\d+))?\s*\)$/i, /^[a-z]{3,20}$/i];
const TEXT_STYLES = {
  color: COLOUR,
  'background-color': COLOUR,
  'text-align': [/^(left|right|center|justify)$/],
  'padding-left': [/^\d{1,3}(\.\d{1,2})?(px|em)$/],
};
const STYLED = ['p', 'span', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'li', 'blockquote', 'pre'];

const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: ALLOWED_TAGS,
  nonTextTags: DROP_WITH_CONTENT,
  allowedAttributes: {
    a: ['href', 'rel', 'target'],
    img: ['src', 'alt', 'width', 'height'],
    '*': ['style', 'class'],
  },
  allowedClasses: { '*': ['ql-*', 'w-e-*'] },
  allowedStyles: Object.fromEntries(STYLED.map((t) => [t, TEXT_STYLES])),
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: [] },
  allowedSchemesAppliedToAttributes: ['href', 'src', 'cite'],
  allowProtocolRelative: false,
  allowVulnerableTags: false,
  parseStyleAttributes: true,
  disallowedTagsMode: 'discard',
  transformTags: {
    a: (tagName, { target, ...attribs }) => ({ tagName, attribs: { ...attribs, ...(target === '_blank' ? { target } : {}), rel: 'noopener noreferrer nofollow' } }),
  },
  exclusiveFilter: (frame) => {
    if (frame.tag !== 'img') return false;
    const src = frame.attribs.src ?? '';
    return !SAME_ORIGIN_PATH.test(src);
  },
};

/** Notice content as it may be stored and served: see the policy above. */
export function sanitizeRichText(html: string): string {
  return sanitizeHtml(html, OPTIONS);
}
