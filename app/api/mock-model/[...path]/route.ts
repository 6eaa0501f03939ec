// The mock model (app/mock-providers/model.ts) under the app: /api/mock-model/v1/chat/completions,
// /api/mock-model/v1/audio/transcriptions, /api/mock-model/v1/_stats.
import { mockModel } from "@/app/mock-providers/model";

// No segment config, like the toolkit's route files (docs/guide/http-routes.md, "Route files under
// today's Next.js defaults"): Node is the default runtime, and route handlers are not cached.

export const GET = (request: Request) => mockModel.handle(request);
export const POST = (request: Request) => mockModel.handle(request);
