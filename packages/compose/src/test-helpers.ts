import { DomainError, type FieldError } from '@hostctl/domain';
import { parseCompose, type ParseComposeOptions } from './compose.parser.js';

/** The field errors parseCompose reports for a document, or [] when it is accepted. */
export function problemsOf(
  text: string,
  variables: Record<string, string> = {},
  options?: ParseComposeOptions,
): FieldError[] {
  try {
    parseCompose(text, variables, options);
    return [];
  } catch (error) {
    if (error instanceof DomainError && error.code === 'invalid_compose') return error.errors ?? [];
    throw error;
  }
}

/** A one-service document with extra service keys (YAML lines, already indented by 4). */
export function withService(extra: string, top = ''): string {
  return `services:\n  web:\n    image: local/busybox:1\n${extra}\n${top}`;
}
