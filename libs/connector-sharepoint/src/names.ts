import { InvalidArgumentError } from '@gateway/connector-api';

/** SharePoint names and gateway paths, checked before any call so no path leaves the library (400 naming the parameter). */

const MAX_NAME_LENGTH = 400;
/** SharePoint's reserved characters in file and folder names. */
const ILLEGAL_NAME = /["*:<>?\\/|#%]|^~|^\s|\s$|^\.+$/;

export function joinPath(folder: string, name: string): string {
  return folder === '/' ? `/${name}` : `${folder}/${name}`;
}

export function checkName(name: unknown, parameter: string): string {
  if (typeof name !== 'string' || name.trim() === '') throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': must be a non-empty name`);
  if (name.length > MAX_NAME_LENGTH) throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': at most ${MAX_NAME_LENGTH} characters`);
  if (ILLEGAL_NAME.test(name) || name === '..' || name === '.') {
    throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': SharePoint names cannot contain " * : < > ? / \\ | # % nor start with ~ or end with a space`);
  }
  return name;
}

/** An absolute gateway path ('/' is the library root) as its segments; '..' and the like are refused. */
export function parseAbsolutePath(path: unknown, parameter: string): string[] {
  if (typeof path !== 'string' || !path.startsWith('/')) throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': must be an absolute path starting with /`);
  const segments = path.split('/').filter((s) => s !== '');
  for (const s of segments) checkName(s, parameter);
  return segments;
}
