/**
 * The SharePoint simulator's data: webs, document libraries, their items (files and folders),
 * versions, role assignments, site users. Metadata is one JSON file rewritten after each change;
 * content lives in blob files next to it, written to a temporary blob first and committed by rename,
 * so a request cut mid-body leaves the file as it was.
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ChangeLogData } from './changes';

export interface RoleAssignmentRec {
  principalId: number;
  roleDefIds: number[];
}

export interface VersionRec {
  id: number;
  label: string;
  blob: string;
  size: number;
  created: string;
  comment: string;
  createdBy: number;
}

export interface FileRec {
  blob: string;
  size: number;
  uiVersion: number;
  /** Bumped on every content change: the second part of ETag / ContentTag. */
  contentVersion: number;
  comment: string;
  checkedOutBy?: number;
  /** Content written by the check-out holder, seen only by them until check-in. */
  draft?: { blob: string; size: number };
  versions: VersionRec[];
  uploads: Record<string, { blob: string; offset: number }>;
}

export interface ItemRec {
  id: number;
  uniqueId: string;
  guid: string;
  listId: string;
  kind: 'file' | 'folder';
  /** Server-relative path: /sites/gateway/Shared Documents/a/b.txt */
  path: string;
  created: string;
  modified: string;
  authorId: number;
  editorId: number;
  /** List item etag ("1", "2", …). */
  itemVersion: number;
  fields: Record<string, unknown>;
  /** Own role assignments when inheritance is broken. */
  roles?: RoleAssignmentRec[];
  file?: FileRec;
}

export interface FieldRec {
  id: string;
  title: string;
  internalName: string;
  typeAsString: string;
  fieldTypeKind: number;
  fromBaseType: boolean;
  hidden: boolean;
  readOnly: boolean;
}

export interface ListRec {
  id: string;
  title: string;
  webPath: string;
  rootPath: string;
  rootFolderId: string;
  entityTypeName: string;
  fields: FieldRec[];
  nextItemId: number;
  created: string;
  roles?: RoleAssignmentRec[];
}

export interface WebRec {
  id: string;
  title: string;
  path: string;
  description: string;
  created: string;
  roles?: RoleAssignmentRec[];
}

export interface UserRec {
  id: number;
  loginName: string;
  title: string;
  email: string;
  principalType: number; // 1 user, 8 SharePoint group
}

export interface StateData extends ChangeLogData {
  siteId: string;
  webs: WebRec[];
  lists: ListRec[];
  items: ItemRec[];
  users: UserRec[];
  nextUserId: number;
}

export const ROLE_DEFINITIONS = [
  { id: 1073741829, name: 'Full Control', roleTypeKind: 5, order: 1, description: 'Has full control.' },
  { id: 1073741828, name: 'Design', roleTypeKind: 4, order: 32, description: 'Can view, add, update, delete, approve, and customize.' },
  { id: 1073741830, name: 'Edit', roleTypeKind: 6, order: 48, description: 'Can add, edit and delete lists; can view, add, update and delete list items and documents.' },
  { id: 1073741827, name: 'Contribute', roleTypeKind: 3, order: 64, description: 'Can view, add, update, and delete list items and documents.' },
  { id: 1073741826, name: 'Read', roleTypeKind: 2, order: 128, description: 'Can view pages and list items and download documents.' },
  { id: 1073741825, name: 'Limited Access', roleTypeKind: 1, order: 160, description: 'Can view specific lists, document libraries, list items, folders, or documents when given permissions.' },
];

/** SharePoint's internal field names encode other characters as _xHHHH_ (e.g. "ref.code" → "ref_x002e_code"). */
export function encodeInternalName(title: string): string {
  return title.replace(/[^A-Za-z0-9_]/g, (c) => `_x${c.charCodeAt(0).toString(16).padStart(4, '0')}_`);
}

const BASE_FIELDS: Array<[string, string, string, number, boolean]> = [
  ['Title', 'Title', 'Text', 2, false],
  ['Created', 'Created', 'DateTime', 4, true],
  ['Modified', 'Modified', 'DateTime', 4, true],
  ['Author', 'Created By', 'User', 20, true],
  ['Editor', 'Modified By', 'User', 20, true],
  ['FileLeafRef', 'Name', 'File', 18, false],
  ['FileRef', 'URL Path', 'Lookup', 7, true],
  ['FileDirRef', 'Path', 'Lookup', 7, true],
  ['FSObjType', 'Item Type', 'Lookup', 7, true],
  ['CheckoutUser', 'Checked Out To', 'User', 20, true],
  ['_UIVersionString', 'Version', 'Text', 2, true],
];

export class SimState {
  data: StateData;
  private readonly file: string;
  readonly blobDir: string;

  constructor(readonly dir: string) {
    this.file = path.join(dir, 'sharepoint-state.json');
    this.blobDir = path.join(dir, 'blobs');
    fs.mkdirSync(this.blobDir, { recursive: true });
    this.data = fs.existsSync(this.file) ? (JSON.parse(fs.readFileSync(this.file, 'utf8')) as StateData) : this.initial();
    this.save();
  }

  private initial(): StateData {
    const now = new Date().toISOString();
    const data: StateData = { siteId: randomUUID(), webs: [], lists: [], items: [], users: [], nextUserId: 7 };
    data.users.push(
      { id: 3, loginName: 'Gateway Owners', title: 'Gateway Owners', email: '', principalType: 8 },
      { id: 4, loginName: 'Gateway Members', title: 'Gateway Members', email: '', principalType: 8 },
      { id: 5, loginName: 'Gateway Visitors', title: 'Gateway Visitors', email: '', principalType: 8 },
    );
    const webs: Array<[string, string]> = [
      ['/sites/gateway', 'Gateway'],
      ['/sites/gateway/team', 'Team'],
    ];
    for (const [p, title] of webs) {
      const web: WebRec = { id: randomUUID(), title, path: p, description: `${title} site`, created: now };
      if (p === '/sites/gateway') {
        web.roles = [
          { principalId: 3, roleDefIds: [1073741829] },
          { principalId: 4, roleDefIds: [1073741827] },
          { principalId: 5, roleDefIds: [1073741826] },
        ];
      }
      data.webs.push(web);
      data.lists.push({
        id: randomUUID(),
        title: 'Documents',
        webPath: p,
        rootPath: `${p}/Shared Documents`,
        rootFolderId: randomUUID(),
        entityTypeName: 'Shared_x0020_Documents',
        fields: BASE_FIELDS.map(([internalName, title, typeAsString, fieldTypeKind, readOnly]) => ({
          id: randomUUID(),
          internalName,
          title,
          typeAsString,
          fieldTypeKind,
          fromBaseType: true,
          hidden: false,
          readOnly,
        })),
        nextItemId: 1,
        created: now,
      });
    }
    return data;
  }

  save(): void {
    const tmp = `${this.file}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(this.data));
    fs.renameSync(tmp, this.file);
  }

  blobPath(blob: string): string {
    return path.join(this.blobDir, blob);
  }

  newBlobName(): string {
    return randomUUID();
  }

  removeBlob(blob: string | undefined): void {
    if (blob) fs.rmSync(this.blobPath(blob), { force: true });
  }

  itemByPath(p: string): ItemRec | undefined {
    const key = p.toLowerCase();
    return this.data.items.find((i) => i.path.toLowerCase() === key);
  }

  itemByUniqueId(id: string): ItemRec | undefined {
    const key = id.toLowerCase();
    return this.data.items.find((i) => i.uniqueId === key);
  }

  listOfPath(p: string): ListRec | undefined {
    const key = p.toLowerCase();
    return this.data.lists.find((l) => key === l.rootPath.toLowerCase() || key.startsWith(l.rootPath.toLowerCase() + '/'));
  }

  webOfPath(p: string): WebRec | undefined {
    const key = p.toLowerCase();
    return [...this.data.webs].sort((a, b) => b.path.length - a.path.length).find((w) => key === w.path.toLowerCase() || key.startsWith(w.path.toLowerCase() + '/'));
  }

  user(id: number): UserRec | undefined {
    return this.data.users.find((u) => u.id === id);
  }

  ensureUser(loginName: string, title?: string, email?: string): UserRec {
    const found = this.data.users.find((u) => u.loginName.toLowerCase() === loginName.toLowerCase());
    if (found) return found;
    const user: UserRec = { id: this.data.nextUserId++, loginName, title: title ?? loginName.split('|').pop()!.split('@')[0], email: email ?? '', principalType: 1 };
    this.data.users.push(user);
    return user;
  }
}
