import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { BasicStrategy } from 'passport-http';
import type { AuthenticatedUser } from './auth.decorators';
import { UsersService } from './users.service';

@Injectable()
export class GatewayBasicStrategy extends PassportStrategy(BasicStrategy, 'basic') {
  constructor(private readonly users: UsersService) {
    super({ passReqToCallback: true, realm: 'content-gateway' });
  }

  async validate(req: Request, username: string, password: string): Promise<AuthenticatedUser | false> {
    // req.ip honours TRUST_PROXY, so the lock-out follows the real client behind a proxy.
    return (await this.users.verify(username, password, req.ip ?? 'unknown')) ?? false;
  }
}
