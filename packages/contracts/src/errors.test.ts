import { describe, expect, it } from 'vitest';
import { messages } from './common';
import { describeMessage, ErrorCode } from './errors';
import { taskRetentionDays } from './projects';
import { BUILD_VERSION_REQUIRED } from './task-api';
import { templateInput } from './templates';

describe('describeMessage', () => {
  it('knows the code and values of every message a builder wrote', () => {
    expect(describeMessage(messages.tooLong('Name', 30))).toEqual({
      code: ErrorCode.tooLong,
      params: { field: 'Name', max: 30 },
    });
    expect(describeMessage(messages.noPermission)).toEqual({ code: ErrorCode.noPermission });
    expect(describeMessage(BUILD_VERSION_REQUIRED)).toEqual({
      code: ErrorCode.required,
      params: { field: 'Build version' },
    });
  });

  it('describes the messages schemas really produce', () => {
    const retention = taskRetentionDays.safeParse(99_999).error?.issues[0]?.message ?? '';
    expect(describeMessage(retention)).toEqual({
      code: ErrorCode.retentionTooLarge,
      params: { max: 36_500 },
    });
    const template = templateInput.safeParse({ name: '', app: 'ansible' }).error?.issues ?? [];
    const name = template.find((i) => i.path[0] === 'name')?.message ?? '';
    expect(describeMessage(name)).toEqual({ code: ErrorCode.required, params: { field: 'Name' } });
  });

  it('knows nothing of other text', () => {
    expect(describeMessage('Something else went wrong')).toBeUndefined();
  });
});
