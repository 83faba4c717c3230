import { S3ServiceException } from '@aws-sdk/client-s3';
import { GatewayError, NotFoundError, UpstreamError, UpstreamTimeoutError, UpstreamUnavailableError } from '@gateway/connector-api';

/** S3 and network failures as the gateway's typed errors. */
export function mapS3Error(e: unknown, identifier: string): unknown {
  if (e instanceof GatewayError) return e;
  if (e instanceof S3ServiceException) {
    const status = e.$metadata?.httpStatusCode;
    if (status === 404 || e.name === 'NoSuchKey' || e.name === 'NotFound' || e.name === 'NoSuchVersion') return new NotFoundError('item', identifier);
    if (status === 503 || e.name === 'SlowDown') return new UpstreamUnavailableError(`S3 is unavailable (${e.name})`, { status }, e);
    return new UpstreamError(`S3 answered ${status ?? '?'} ${e.name}: ${e.message}`.slice(0, 500), { status }, e);
  }
  const code = (e as { code?: string; name?: string })?.code ?? (e as { name?: string })?.name;
  if (code === 'TimeoutError' || code === 'ETIMEDOUT') return new UpstreamTimeoutError('S3 did not answer in time', {}, e);
  if (code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EPIPE') {
    return new UpstreamUnavailableError(`S3 is unreachable (${code})`, {}, e);
  }
  return e;
}
