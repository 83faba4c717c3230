import { Global, Inject, Module, type DynamicModule, type OnApplicationShutdown, type FactoryProvider } from '@nestjs/common';
import { createTextExtractor, type ClosableTextExtractor, type TextExtractorOptions } from './extractor';
import { TEXT_EXTRACTOR } from './text-extractor';

/**
 * Provides the process's TextExtractor under TEXT_EXTRACTOR. Global, so the jobs module injects it
 * without importing this module; AppModule registers it once from the configuration.
 */
@Global()
@Module({})
export class TextExtractionModule implements OnApplicationShutdown {
  constructor(@Inject(TEXT_EXTRACTOR) private readonly extractor: ClosableTextExtractor) {}

  static forRoot(options: TextExtractorOptions): DynamicModule {
    return TextExtractionModule.forRootAsync({ useFactory: () => options });
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as Nest's own FactoryProvider: the arguments are whatever `inject` names
  static forRootAsync(options: { useFactory: (...args: any[]) => TextExtractorOptions; inject?: FactoryProvider['inject'] }): DynamicModule {
    return {
      module: TextExtractionModule,
      providers: [
        {
          provide: TEXT_EXTRACTOR,
          useFactory: (...args: unknown[]) => createTextExtractor(options.useFactory(...args)),
          inject: options.inject ?? [],
        },
      ],
      exports: [TEXT_EXTRACTOR],
    };
  }

  onApplicationShutdown(): void {
    this.extractor.close();
  }
}
