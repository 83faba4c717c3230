import { Body, Delete, Get, Param, Post } from '@nestjs/common';
import { CurrentUser, type AuthenticatedUser } from '../auth/auth.decorators';
import { UsersService } from '../auth/users.service';
import { Route, RouteFamily } from '../common/routes';
import { CreateUserDto, UserDto } from './users.dto';

@RouteFamily('admin/users', { tag: 'Administration', access: 'basic', roles: ['admin'] })
export class UsersController {
  constructor(private readonly users: UsersService) {}

  @Post()
  @Route({ summary: 'Create a user', results: UserDto, status: 201, errors: [400, 409] })
  create(@Body() body: CreateUserDto): Promise<UserDto> {
    return this.users.create(body.username, body.password, body.roles);
  }

  @Get()
  @Route({ summary: 'List users', results: UserDto, isArray: true })
  list(): Promise<UserDto[]> {
    return this.users.list();
  }

  @Delete(':username')
  @Route({
    summary: 'Delete a user',
    description: 'Returns the deleted user. An administrator cannot delete their own account.',
    results: UserDto,
    errors: [400, 404],
  })
  delete(@Param('username') username: string, @CurrentUser() user: AuthenticatedUser): Promise<UserDto> {
    return this.users.delete(username, user.username);
  }
}
