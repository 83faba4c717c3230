import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { BasicAuthGuard, RolesGuard } from './auth.guards';
import { GatewayBasicStrategy } from './basic.strategy';
import { PasswordHasher } from './password-hasher';
import { UsersService } from './users.service';

@Module({
  imports: [PassportModule.register({ session: false })],
  providers: [
    PasswordHasher,
    UsersService,
    GatewayBasicStrategy,
    // Order matters: authenticate first, then check roles.
    { provide: APP_GUARD, useClass: BasicAuthGuard },
    { provide: APP_GUARD, useClass: RolesGuard },
  ],
  exports: [UsersService],
})
export class AuthModule {}
