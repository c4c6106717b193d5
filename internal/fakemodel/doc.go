// Package fakemodel is a scripted fake model server for end-to-end tests that
// drive the real coding-agent CLIs (Claude Code, Codex, Gemini CLI, OpenCode,
// pi, Qwen Code, Copilot CLI) on 127.0.0.1 instead of a real model.
//
// One [Server] answers one [Script]; point every agent process of a test at
// it and the turns carry over from one process to the next, so a single
// script drives a whole multi-iteration ralph loop. Run it on its own with
// cmd/fakemodel. [AgentEnv] and [AgentArgs] say how to run each CLI against it.
//
// # Script format
//
// A script is JSON:
//
//	{"turns": [
//	  {"text": "I will create hello.txt.",
//	   "tools": [{"write": {"path": "hello.txt", "content": "hello\n"}}]},
//	  {"tools": [{"shell": {"command": "echo hi >> hello.txt"}}]},
//	  {"text": "done <event topic=\"build.done\">tests: pass</event>"},
//	  {"error": {"status": 400, "message": "fakemodel scripted failure"}}
//	]}
//
// Each turn is one model answer: optional "text", then zero or more "tools"
// calls; or an "error" {status, message, type?}, answered as an HTTP error in
// the shape of the API that was called. Tool calls are portable:
//
//   - {"write": {"path", "content"}} creates a file;
//   - {"shell": {"command"}} runs a shell command in the agent's directory;
//   - {"read": {"path"}} reads a file;
//   - {"call": {"name", "input"}} calls a tool of the CLI by name, with input
//     passed unchanged (an object, or a string for freeform tools).
//
// A turn with tool calls makes the CLI run them and send the results back,
// which asks for the next turn; a turn with only text ends the CLI's session.
// Unknown keys are errors ([ParseScript]).
//
// # Mapping portable calls onto the tools a request offers
//
// Every request lists its tools with JSON schemas. For each portable call the
// server picks a tool by name candidates, then fills its arguments by
// parameter names read from the schema:
//
//   - write: a tool named write / write_file / create / create_file (any
//     case, _ and - ignored) with a path-like parameter (file_path, filePath,
//     path, absolute_path, …) and a content-like one (content, file_text,
//     contents, text, …). Else Codex's apply_patch, freeform or with an
//     "input" parameter, given "*** Begin Patch\n*** Add File: PATH\n+line\n
//     *** End Patch\n". Else the shell tool with a heredoc that writes the file.
//   - shell: bash / run_shell_command / shell / exec_command / … with a
//     command-like parameter (command, cmd, …); an array-typed command gets
//     ["bash", "-lc", COMMAND].
//   - read: read / read_file / view / … with a path parameter; else `cat` via
//     the shell tool.
//
// Other required parameters get plausible values: anything named like
// "description" gets "scripted step", the rest a value built from its schema
// (see side requests below). Seen mappings: Claude Code Write{file_path,
// content}, Bash{command}; Codex apply_patch (freeform), exec_command{cmd};
// Gemini CLI and Qwen Code write_file{file_path, content},
// run_shell_command{command}; OpenCode write{filePath, content},
// bash{command}; pi write{path, content}, bash{command}; Copilot
// create{path, file_text}, bash{command, description}.
//
// Relative paths are made absolute, because Claude Code's Write and
// Copilot's create insist on it: the server looks for the agent's working
// directory in the prompt ("Primary working directory: /x", "Current working
// directory: /x", "<cwd>/x</cwd>", "I'm currently working in the directory:
// /x", "Workspace Directories: - /x", …), preferring a candidate that exists
// as a directory on this machine, since the server runs beside the agent. When
// none is found paths stay relative. apply_patch paths stay relative, as its
// grammar wants. Shell commands are never rewritten.
//
// # Main turns and side requests
//
// A generation request consumes the next turn (a "main" request) only when it
// offers at least one tool and its model matches none of the side-model
// patterns ([DefaultSideModels]: *haiku*, *flash-lite*; see
// [WithSideModels]). Everything else — titles, Gemini CLI's routing
// classifier and next-speaker check, summaries — is a "side" request and
// consumes nothing: it gets "ok", or, when it asks for JSON (Gemini
// responseJsonSchema/responseSchema/responseMimeType, OpenAI
// response_format, Responses text.format, Anthropic output_format), an object
// built from the schema: const, else the first enum value, integers and
// numbers at their minimum or 1, strings "ok", booleans false, every object
// property filled in, and next_speaker = "user".
//
// Main requests take turns in arrival order across all connections and
// processes. When the script is exhausted, main requests get the text
// [ExhaustedText] with no tool calls (logged with Exhausted set), which ends
// the agent's session. With [RepeatIdenticalRetries], a main request whose
// conversation equals the previous main request's gets the previous answer
// again, so client retries do not skip turns.
//
// # APIs
//
// Routes match by path suffix, so any base-URL prefix works:
//
//   - Anthropic Messages: POST …/messages (SSE when "stream" is true, JSON
//     otherwise) and …/messages/count_tokens.
//   - OpenAI Chat Completions: POST …/chat/completions (SSE chunks with
//     tool_calls deltas, a usage chunk and data: [DONE]; or JSON).
//   - OpenAI Responses: POST …/responses (SSE response.created …
//     response.completed; function_call and, for freeform tools such as
//     Codex's apply_patch, custom_tool_call items; or JSON).
//   - Gemini: POST …/models/M:generateContent, :streamGenerateContent
//     (?alt=sse) and :countTokens.
//   - GET …/models and …/models/M (a list that suits OpenAI, Anthropic and
//     Gemini clients), and GET/HEAD / (Claude Code probes it).
//
// Any API key is accepted. Usage is about one token per 4 bytes of request
// body (input) and of answer text and tool arguments (output).
//
// # Usage limits and the clock
//
// [Server.Limit] refuses every generation request of one API with HTTP 429
// and a usage limit until a reset on the server's clock ([WithClock],
// moved on by [Server.Advance]), consuming no turn and telling the client
// not to retry; such requests are logged with Kind [KindLimited]. Another
// CLI, on another API, goes on with the turns meanwhile.
//
// # Request log
//
// [Server.Requests] returns one [RequestLog] per request: endpoint, model,
// tool names offered, main/side/other, the turn answered, the detected
// working directory, the answer in the request's own tool vocabulary, and
// which of the strings given to [WithWatch] the prompt contained.
// [WithLog] also writes it as JSON lines as requests arrive.
package fakemodel
