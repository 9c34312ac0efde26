// The probe as a Worker (bundled by wrangler like the production Worker): GET / answers its digest.
import { probe } from './export-probe.ts';

export default {
  async fetch(): Promise<Response> {
    try {
      return Response.json(await probe());
    } catch (err) {
      return new Response(String((err as Error)?.stack ?? err), { status: 500 });
    }
  },
};
