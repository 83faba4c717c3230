/**
 * Media types by extension. A short table on purpose: the gateway declares no
 * mime database dependency, and unknown extensions are fine as octet-stream.
 */
const BY_EXTENSION: Record<string, string> = {
  txt: 'text/plain',
  text: 'text/plain',
  log: 'text/plain',
  md: 'text/markdown',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  htm: 'text/html',
  html: 'text/html',
  css: 'text/css',
  js: 'text/javascript',
  mjs: 'text/javascript',
  xml: 'application/xml',
  json: 'application/json',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  pdf: 'application/pdf',
  rtf: 'application/rtf',
  zip: 'application/zip',
  gz: 'application/gzip',
  tgz: 'application/gzip',
  tar: 'application/x-tar',
  '7z': 'application/x-7z-compressed',
  doc: 'application/msword',
  dot: 'application/msword',
  xls: 'application/vnd.ms-excel',
  ppt: 'application/vnd.ms-powerpoint',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  odt: 'application/vnd.oasis.opendocument.text',
  ods: 'application/vnd.oasis.opendocument.spreadsheet',
  odp: 'application/vnd.oasis.opendocument.presentation',
  eml: 'message/rfc822',
  msg: 'application/vnd.ms-outlook',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  bmp: 'image/bmp',
  webp: 'image/webp',
  svg: 'image/svg+xml',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  ico: 'image/vnd.microsoft.icon',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  mp4: 'video/mp4',
  mov: 'video/quicktime',
  webm: 'video/webm',
  avi: 'video/x-msvideo',
};

export const DEFAULT_MIME_TYPE = 'application/octet-stream';

const NOT_A_DOCUMENT_TYPE = new Set([DEFAULT_MIME_TYPE, 'application/x-www-form-urlencoded']);
const MEDIA_TYPE = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/;

export function mimeTypeFor(fileName: string): string {
  const dot = fileName.lastIndexOf('.');
  if (dot <= 0) return DEFAULT_MIME_TYPE;
  return BY_EXTENSION[fileName.slice(dot + 1).toLowerCase()] ?? DEFAULT_MIME_TYPE;
}

/**
 * A media type the client declared, worth remembering over the extension.
 * octet-stream is what clients send when they do not know, and form or
 * multipart types describe the request encoding (curl --data sends
 * x-www-form-urlencoded), not the document; none of them is an override.
 * Malformed values are ignored rather than stored. Parameters are dropped:
 * they would be replayed into a response header.
 */
export function declaredMimeType(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const essence = value.split(';', 1)[0].trim().toLowerCase();
  if (!MEDIA_TYPE.test(essence) || NOT_A_DOCUMENT_TYPE.has(essence) || essence.startsWith('multipart/')) return undefined;
  return essence.length <= 127 ? essence : undefined;
}
