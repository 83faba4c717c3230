import { Inject, Injectable } from '@nestjs/common';
import { DATABASE } from './tokens';
import type { Database } from './database';

export interface UserRecord {
  username: string;
  passwordHash: string;
  roles: string[];
  /** Principals besides the user name for permission-trimmed search (always read back; none when absent on a write). */
  groups?: string[];
  createdAt: number;
}

@Injectable()
export class UsersRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  async find(username: string): Promise<UserRecord | undefined> {
    const row = await this.database.db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  async list(): Promise<UserRecord[]> {
    const rows = await this.database.db.selectFrom('users').selectAll().orderBy('username').execute();
    return rows.map(toRecord);
  }

  /** Inserts; returns false when the username is taken. */
  async insert(user: UserRecord): Promise<boolean> {
    const result = await this.database.db
      .insertInto('users')
      .values(toRow(user))
      .onConflict((oc) => oc.column('username').doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async upsert(user: UserRecord): Promise<void> {
    await this.database.db
      .insertInto('users')
      .values(toRow(user))
      .onConflict((oc) =>
        oc.column('username').doUpdateSet((eb) => ({ password_hash: eb.ref('excluded.password_hash'), roles: eb.ref('excluded.roles'), groups: eb.ref('excluded.groups') })),
      )
      .execute();
  }

  /**
   * Changes the user's hash and/or roles; false when the user does not exist, or (with `expectedHash`)
   * when the hash is no longer that one — a rehash must not undo a password change made meanwhile.
   */
  async update(username: string, change: { passwordHash?: string; roles?: string[]; groups?: string[] }, expectedHash?: string): Promise<boolean> {
    if (change.passwordHash === undefined && change.roles === undefined && change.groups === undefined) return (await this.find(username)) !== undefined;
    let query = this.database.db
      .updateTable('users')
      .set({
        ...(change.passwordHash !== undefined ? { password_hash: change.passwordHash } : {}),
        ...(change.roles !== undefined ? { roles: change.roles.join(',') } : {}),
        ...(change.groups !== undefined ? { groups: change.groups.join(',') } : {}),
      })
      .where('username', '=', username);
    if (expectedHash !== undefined) query = query.where('password_hash', '=', expectedHash);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async delete(username: string): Promise<boolean> {
    const result = await this.database.db.deleteFrom('users').where('username', '=', username).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async count(): Promise<number> {
    const row = await this.database.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}

function toRecord(row: { username: string; password_hash: string; roles: string; groups: string; created_at: number }): UserRecord {
  return {
    username: row.username,
    passwordHash: row.password_hash,
    roles: row.roles ? row.roles.split(',').filter(Boolean) : [],
    groups: row.groups ? row.groups.split(',').filter(Boolean) : [],
    createdAt: Number(row.created_at),
  };
}

function toRow(user: UserRecord) {
  return {
    username: user.username,
    password_hash: user.passwordHash,
    roles: user.roles.join(','),
    groups: (user.groups ?? []).join(','),
    created_at: user.createdAt,
  };
}
