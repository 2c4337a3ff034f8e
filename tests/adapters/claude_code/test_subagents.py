"""Subagent transcripts (``<session>/subagents/agent-<id>.jsonl``) from the real CLI."""

from replay import claude_transcripts

from agentspool.adapters.claude_code import ClaudeCode
from agentspool.adapters.claude_code._sessions import subagent_transcripts


def test_a_subagent_file_reads_as_that_agents_conversation() -> None:
    main = claude_transcripts("tui-subagent-permission")[0]
    agents = subagent_transcripts(main)
    assert len(agents) == 1
    agent_id = agents[0].rsplit("agent-", 1)[1].removesuffix(".jsonl")
    chat = ClaudeCode().read_chat("r", "", agents[0])
    kinds = [m.kind for m in chat.messages]
    assert {"text", "tool_call", "tool_result"} <= set(kinds)
    assert {m.agent_id for m in chat.messages} == {agent_id}
    assert (chat.state, chat.activity) == ("needs_input", "idle")
    assert chat.usage.output_tokens > 0


def test_the_main_transcript_links_the_agent_call_to_the_subagent() -> None:
    main = claude_transcripts("tui-subagent-permission")[0]
    agent_id = subagent_transcripts(main)[0].rsplit("agent-", 1)[1][:-6]
    messages = ClaudeCode().read_chat("r", "", main).messages
    call = next(m for m in messages if m.kind == "tool_call" and m.presentation == "agent")
    result = next(
        m for m in messages if m.kind == "tool_result" and m.tool_use_id == call.tool_use_id
    )
    assert agent_id in result.text
    assert not any(m.agent_id for m in messages)
