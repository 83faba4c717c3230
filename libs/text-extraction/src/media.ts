import type { ExtractionInput } from './text-extractor';

/** How a document's text is obtained. `html` and `xml` are decoded natively and stripped of their markup. */
export type NativeKind = 'text' | 'html' | 'xml';
export type Route = { kind: NativeKind; charset?: string } | { kind: 'tika'; mimeType?: string };

/** Media types that say nothing about the format: the name's extension decides. */
const GENERIC = new Set(['', 'application/octet-stream', 'binary/octet-stream', 'application/unknown', 'application/x-unknown']);

/**
 * text/* types that are not plain text: Tika reads them (RTF is text/rtf as often as application/rtf;
 * vCard/calendar are fine as text, so they stay native).
 */
const TEXT_BUT_NOT_NATIVE = new Set(['text/rtf', 'text/richtext', 'text/enriched']);

const NATIVE_APPLICATION: Record<string, NativeKind> = {
  'application/json': 'text',
  'application/x-ndjson': 'text',
  'application/ndjson': 'text',
  'application/csv': 'text',
  'application/markdown': 'text',
  'application/x-markdown': 'text',
  'application/yaml': 'text',
  'application/x-yaml': 'text',
  'application/javascript': 'text',
  'application/x-sh': 'text',
  'application/sql': 'text',
  'application/xml': 'xml',
  'application/xhtml+xml': 'html',
};

const NATIVE_EXTENSIONS: Record<string, NativeKind> = {
  txt: 'text',
  text: 'text',
  log: 'text',
  md: 'text',
  markdown: 'text',
  csv: 'text',
  tsv: 'text',
  json: 'text',
  ndjson: 'text',
  yaml: 'text',
  yml: 'text',
  ini: 'text',
  properties: 'text',
  xml: 'xml',
  html: 'html',
  htm: 'html',
  xhtml: 'html',
};

/** `text/HTML; Charset="latin1"` → { type: 'text/html', charset: 'latin1' }. */
export function parseMediaType(value: string | undefined): { type: string; charset?: string } {
  if (!value) return { type: '' };
  const [head, ...params] = value.split(';');
  let charset: string | undefined;
  for (const param of params) {
    const eq = param.indexOf('=');
    if (eq < 0) continue;
    if (param.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    charset = param.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1').trim() || undefined;
  }
  return { type: head.trim().toLowerCase(), charset };
}

function extensionOf(name: string): string {
  const base = name.slice(name.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
}

/** Decides native decoding or Tika from the declared type, or the extension when the type is generic. */
export function routeOf(input: ExtractionInput): Route {
  const { type, charset } = parseMediaType(input.mimeType);
  if (GENERIC.has(type)) {
    const kind = NATIVE_EXTENSIONS[extensionOf(input.name)];
    // A generic type is not worth sending: Tika detects the format itself.
    return kind ? { kind, charset } : { kind: 'tika' };
  }
  if (type === 'text/html') return { kind: 'html', charset };
  if (type === 'text/xml') return { kind: 'xml', charset };
  if (type.startsWith('text/') && !TEXT_BUT_NOT_NATIVE.has(type)) return { kind: 'text', charset };
  const known = NATIVE_APPLICATION[type];
  if (known) return { kind: known, charset };
  if (type.endsWith('+json')) return { kind: 'text', charset };
  // Office Open XML, OpenDocument, EPUB are zip containers, not +xml; image/svg+xml and the feeds are markup.
  if (type.endsWith('+xml')) return { kind: 'xml', charset };
  return { kind: 'tika', mimeType: type };
}
