import { ApiProperty } from '@nestjs/swagger';
import { ArrayNotEmpty, ArrayUnique, IsArray, IsDefined, IsIn, IsString, IsUrl, MaxLength, MinLength } from 'class-validator';
import { RUN_EVENTS, type RunEventName } from '@gateway/persistence';

/** A webhook secret's shortest length: an HMAC key guessable in fewer bits would sign for anyone. */
export const WEBHOOK_SECRET_MIN_LENGTH = 16;

/** A webhook, in the configuration file's `webhooks:` list and in `POST /api/admin/webhooks`. */
export class WebhookDefinitionDto {
  @ApiProperty({ example: 'https://ops.example.com/hooks/gateway', description: 'The endpoint: an http:// or https:// URL, sent a JSON POST per event' })
  @IsDefined({ message: 'url is required' })
  @IsString()
  @MaxLength(2048)
  @IsUrl({ protocols: ['http', 'https'], require_protocol: true, require_tld: false, allow_fragments: false }, { message: 'url must be an http:// or https:// URL' })
  url!: string;

  @ApiProperty({ enum: RUN_EVENTS, isArray: true, example: ['run.completed', 'run.failed'], description: 'The run events sent to it' })
  @IsDefined({ message: 'events is required' })
  @IsArray({ message: 'events must be a list of event names' })
  @ArrayNotEmpty({ message: 'events must name at least one event' })
  @ArrayUnique({ message: 'events must not repeat an event' })
  @IsIn([...RUN_EVENTS], { each: true, message: `each of events must be one of ${RUN_EVENTS.join(', ')}` })
  events!: RunEventName[];

  @ApiProperty({
    example: 'whsec-3f1c0c8e9a7b4d2e8f6a5b4c3d2e1f00',
    minLength: WEBHOOK_SECRET_MIN_LENGTH,
    maxLength: 256,
    writeOnly: true,
    description: 'The HMAC-SHA256 key of the Gateway-Signature header; the endpoint verifies with the same. Never answered back',
  })
  @IsDefined({ message: 'secret is required' })
  @IsString()
  @MinLength(WEBHOOK_SECRET_MIN_LENGTH, { message: `secret must be at least ${WEBHOOK_SECRET_MIN_LENGTH} characters` })
  @MaxLength(256)
  secret!: string;
}
