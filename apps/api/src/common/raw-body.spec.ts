import { Controller, Post, Put, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { Request } from 'express';
import { RawBody, RawBodyRoutes, routePattern } from './raw-body';

@Controller('repo/:connectorId')
class DocumentsController {
  @Put('update')
  @RawBody()
  update(): void {}

  @Put('updateContent')
  @RawBody()
  updateContent(): void {}

  @Put('updateProperties')
  updateProperties(): void {}

  @Post('update')
  postUpdate(): void {}
}

@Controller('admin/users')
class UsersController {
  @Post()
  create(): void {}
}

const req = (method: string, path: string) => ({ method, path }) as Request;

describe('RawBodyRoutes', () => {
  let app: INestApplication;
  const routes = new RawBodyRoutes();
  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ controllers: [DocumentsController, UsersController] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    routes.collect(app, 'gateway/api');
  });
  afterAll(() => app.close());

  it.each([
    ['PUT', '/gateway/api/repo/fs/update'],
    ['PUT', '/gateway/api/repo/fs/updateContent'],
    ['PUT', '/gateway/api/repo/docs.v2/updateContent/'],
    // Express routes case-insensitively, so the parsers must be skipped the same way.
    ['PUT', '/gateway/api/repo/fs/UPDATECONTENT'],
  ])('%s %s takes its body raw', (method, path) => {
    expect(routes.matches(req(method, path))).toBe(true);
  });

  it.each([
    ['PUT', '/gateway/api/repo/fs/updateProperties'],
    ['POST', '/gateway/api/repo/fs/update'],
    ['POST', '/gateway/api/admin/users'],
    ['PUT', '/gateway/api/repo/fs/x/update'],
    ['PUT', '/api/repo/fs/update'],
    ['PUT', '/gateway/api/repo//update'],
  ])('%s %s leaves its body to the parsers', (method, path) => {
    expect(routes.matches(req(method, path))).toBe(false);
  });
});

describe('routePattern', () => {
  it('takes dots literally and refuses segments it cannot translate', () => {
    expect(routePattern(['api', 'v1.0', ':id']).test('/api/v1x0/7')).toBe(false);
    expect(routePattern(['api', 'v1.0', ':id']).test('/api/v1.0/7')).toBe(true);
    expect(() => routePattern(['api', 'files/*path'])).toThrow(/plain segments/);
  });
});
