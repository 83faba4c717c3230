import { Injectable } from '@nestjs/common';
import * as argon2 from 'argon2';

/** argon2id with the library's defaults (64 MiB, t=3): memory-hard on purpose. */
@Injectable()
export class PasswordHasher {
  private dummyHash?: Promise<string>;

  hash(password: string): Promise<string> {
    return argon2.hash(password, { type: argon2.argon2id });
  }

  async verify(hash: string, password: string): Promise<boolean> {
    try {
      return await argon2.verify(hash, password);
    } catch {
      return false;
    }
  }

  /** Spends the same time as a real verification, so unknown user names are not revealed by timing. */
  async verifyAgainstNothing(password: string): Promise<void> {
    this.dummyHash ??= this.hash('not-a-real-password-' + Math.random());
    await this.verify(await this.dummyHash, password);
  }
}
