import { Body, Delete, Get, Param, Post, Query, UseGuards, UseInterceptors } from '@nestjs/common';
import { ApiParam } from '@nestjs/swagger';
import { NEXT_CURSOR_HEADER, Page, PagingHeadersInterceptor } from '../common/paging';
import { Route, RouteFamily } from '../common/routes';
import { StrictInputGuard } from '../common/strict-input.guard';
import { WebhookDefinitionDto } from '../config/webhook-definition.dto';
import { WebhookAttemptDto, WebhookDeliveriesQuery, WebhookDto } from './webhooks.dto';
import { WebhooksService } from './webhooks.service';

const IdParam = () => ApiParam({ name: 'id', type: String, description: 'Webhook id' });

@RouteFamily('admin/webhooks', { tag: 'Webhooks (administration)', access: 'basic', roles: ['admin'] })
@UseGuards(StrictInputGuard)
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @Route({
    summary: 'Add a webhook',
    description:
      'Every event of the list is POSTed to the url as JSON, signed with the secret (Gateway-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">), ' +
      'from a durable outbox: retried with exponential back-off on 5xx, time-out or network error, not on 4xx. The secret is never answered back.',
    results: WebhookDto,
    status: 201,
    errors: [400],
  })
  create(@Body() body: WebhookDefinitionDto): Promise<WebhookDto> {
    return this.webhooks.create(body);
  }

  @Get()
  @Route({ summary: 'List webhooks', results: WebhookDto, isArray: true })
  list(): Promise<WebhookDto[]> {
    return this.webhooks.list();
  }

  @Get(':id')
  @IdParam()
  @Route({ summary: 'Get a webhook', results: WebhookDto, errors: [400, 404] })
  get(@Param('id') id: string): Promise<WebhookDto> {
    return this.webhooks.get(id);
  }

  @Delete(':id')
  @IdParam()
  @Route({
    summary: 'Delete a webhook',
    description: 'With its pending deliveries and their history; returns the deleted webhook. 409 for a webhook of the configuration file.',
    results: WebhookDto,
    errors: [400, 404, 409],
  })
  delete(@Param('id') id: string): Promise<WebhookDto> {
    return this.webhooks.delete(id);
  }

  @Get(':id/deliveries')
  @IdParam()
  @UseInterceptors(PagingHeadersInterceptor)
  @Route({
    summary: 'List delivery attempts',
    description: `The webhook's attempts, newest first: time, event id and event, job and run, attempt number, status code or error, outcome and next attempt. The next page's cursor is in ${NEXT_CURSOR_HEADER}.`,
    results: WebhookAttemptDto,
    isArray: true,
    headers: { [NEXT_CURSOR_HEADER]: { description: 'The cursor of the next page; absent on the last', schema: { type: 'string' } } },
    errors: [400, 404],
  })
  deliveries(@Param('id') id: string, @Query() query: WebhookDeliveriesQuery): Promise<Page<WebhookAttemptDto[]>> {
    return this.webhooks.deliveries(id, query);
  }
}
