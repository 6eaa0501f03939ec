// The mock model (app/mock-providers/model.ts) under the app: /api/mock-model/v1/chat/completions,
// /api/mock-model/v1/audio/transcriptions, /api/mock-model/v1/_stats.
import { mockModel } from "@/app/mock-providers/model";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = (request: Request) => mockModel.handle(request);
export const POST = (request: Request) => mockModel.handle(request);
