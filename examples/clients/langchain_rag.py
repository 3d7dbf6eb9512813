"""A LangChain RAG chain streaming through guardrail: only ``base_url`` changes.

    python examples/clients/langchain_rag.py      # in .venv-examples (scripts/setup-examples)

The retrieved documents go into the system prompt as tagged ``<document>``s, which
guardrail takes as the grounding.  LangChain keeps only the chunk fields it knows, so
the report is read back from ``GET /v1/guardrail/reports/{stream_id}``, the id taken
from the ``x-guardrail-stream-id`` response header by an httpx event hook.
"""

from __future__ import annotations

import os

import httpx
from langchain_core.documents import Document
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from langchain_openai import ChatOpenAI

GUARDRAIL_URL = os.environ.get("GUARDRAIL_URL", "http://127.0.0.1:8080/v1")
API_KEY = os.environ.get("GUARDRAIL_API_KEY", "client-key")  # guardrail's key, not the LLM's
MODEL = os.environ.get("GUARDRAIL_MODEL", "fake-llm")

DOCS = [  # what a retriever would return
    Document("The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in "
             "Paris, France.", metadata={"source": "eiffel.md#1"}),
    Document("It was designed and built by the company of Gustave Eiffel from 1887 to 1889 "
             "as the centrepiece of the 1889 World's Fair.", metadata={"source": "eiffel.md#2"}),
    Document("The tower is 330 metres tall.", metadata={"source": "eiffel.md#3"}),
]
retriever = RunnableLambda(lambda question: DOCS)  # stands in for your vector store


def format_docs(docs: list[Document]) -> str:
    return "\n".join(f'<document source="{d.metadata["source"]}">{d.page_content}</document>'
                     for d in docs)


prompt = ChatPromptTemplate.from_messages([
    ("system", "Answer the question using only the documents below.\n\n{context}"),
    ("human", "{question}"),
])


class StreamIds:
    """An httpx response hook: remembers each ``x-guardrail-stream-id`` guardrail sends."""

    def __init__(self) -> None:
        self.ids: list[str] = []

    def __call__(self, response: httpx.Response) -> None:
        if stream_id := response.headers.get("x-guardrail-stream-id"):
            self.ids.append(stream_id)


def main() -> None:
    stream_ids = StreamIds()
    http = httpx.Client(event_hooks={"response": [stream_ids]}, timeout=120)
    llm = ChatOpenAI(base_url=GUARDRAIL_URL, api_key=API_KEY, model=MODEL, http_client=http,
                     extra_body={"guardrail": {"policy": {"action": "redact"}}})
    chain = ({"context": retriever | format_docs, "question": RunnablePassthrough()}
             | prompt | llm | StrOutputParser())
    for text in chain.stream("When was the Eiffel Tower built, and how tall is it?"):
        print(text, end="", flush=True)

    report = http.get(f"{GUARDRAIL_URL}/guardrail/reports/{stream_ids.ids[-1]}",
                      headers={"authorization": f"Bearer {API_KEY}"})
    report.raise_for_status()
    g = report.json()["guardrail"]
    print("\n--- guardrail report")
    print(f"action: {g['action']}  hallucination_detected: {g['hallucination_detected']}")
    for s in g["sentences"]:
        if s["action"] != "release":
            print(f"{s['action']}: {s['original'].strip()!r} -> {s['released'].strip()!r}")


if __name__ == "__main__":
    main()
