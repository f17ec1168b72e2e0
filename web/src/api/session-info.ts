// The signed-in user as the API tells it (GET /v1/session/), read by the shell and the
// Account view from one cached query.
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from './client';

/** `enabled` false before sign-in: the answer would be a 401. */
export function useSessionInfo(enabled = true) {
  return useQuery({ queryKey: ['session'], queryFn: async () => unwrap(await api.GET('/v1/session/')), refetchInterval: false, staleTime: 60_000, enabled });
}
