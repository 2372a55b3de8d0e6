"""Offline backlog generation (seed §5): what the meeting asked for, as quoted, literal stories.

Owns: turning one segment and its retrieved context into a ``GenerationDraft``. The rules:

1. Capture (``capture.classify``): a learned classifier decides per sentence whether it states a
   need or decision (F), a quality constraint (A) or neither (NULL: chit-chat, agreement, meta
   talk, findings). Questions never are requirements; a real question about the topic becomes an
   open question, verbatim, never answered. Each p is read against the segment's requirement
   density (``capture.relative_to_density``): in a workshop where most of what is said asks for
   something a hesitant need counts, in a design chat a confident-sounding remark counts less.
2. Grouping (``grouping``), one need one story: a list item is one story named by its first
   sentence, a label ("- NEW: sleep timer. From the menu ...") or a need said in full; a
   definition ("Baby-proof means: ...") joins the story that says the term. A requirement
   sentence joins the story before it when it elaborates it (said within ``ELABORATION_GAP``
   sentences and about the same thing, cosine >=
   ``ELABORATION_SIMILARITY``, or a short follow-up: "and it should be red", "yes, a big one"),
   joins any story of the segment it repeats (cosine >= ``REPEAT_SIMILARITY``), or revises a
   recent one (``revision``: a changed figure, "let's not do X after all"); otherwise it starts
   a story when it is confident (``SEED_AT``, or ``CUE_SEED_AT`` when it states a need plainly;
   a short fragment without a need cue only from ``FRAGMENT_SEED_AT``). The others join the need
   they sit next to or resemble; one that joins none starts a story from ``ORPHAN_SEED_AT``; one
   below ``JOIN_AT`` (quoted mostly as talk around a need) is left out. A quality
   constraint said next to a need becomes a criterion of that story; said on its own, a story of
   its own. The strongest ``max_stories_per_segment`` stories are kept, in text order (the
   statements of the others are quoted by the need written before them, never dropped); a need
   said once with nothing beyond its title joins the most similar need of the segment as a
   criterion when that gives it one (``BARE_FOLD_SIMILARITY``). The meeting's own work ("now we
   have to calculate the production costs", ``_TEAM_WORK``) is neither a story nor evidence of
   one; nor is a task a participant takes on ("I'll check with the commercial team",
   ``_OWN_TASK``) or a survey finding ("fifty percent of the users only use ten percent of the
   buttons", ``_SURVEY_SHARE``), whose neighbours stay evidence of the need before it. How
   things are done now ("at the moment we ring them", ``grouping.describes_now``) starts no
   story and gives no criterion: it is quoted by the need it is said with.
3. Drafting (``phrasing.write_story``): title, persona, benefit only when stated, criteria that
   add to the title; the main statement's quote first, every elaboration quoted with it, a
   revised statement under ``superseded_quotes`` and the story written from the later decision.
   When the main statement gives no title, the story is written from its next strongest statement
   that does, is confident enough to start a story of its own (``WRITE_FROM_AT``; or to give
   criteria, ``PLAIN_WRITE_FROM_AT``, when it says a need or a decision left out plainly) and is
   no short fragment ("Or a clap ."), and that statement is then its main quote; with none, its
   statements are talk around the need before it and quoted there (with nothing before it, by
   the next need; when no need of the segment reads, the first is written from a weaker statement
   or a fragment, and so is a story whose statements the need before has no room for, rather than
   lose them; statements the need before has no room for are quoted by the next need).
4. Stories group into one feature (two when there are more than three stories and they fall into
   two clearly separate clusters), named by the keyphrase of the segment its stories use most;
   one epic per segment theme.
5. Context: a retrieved Feature/Epic whose text has cosine >= ``PARENT_REUSE_AT_LEAST`` with the new
   one is reused (``existing_work_item_id``). A retrieved User Story (the loader indexes every
   process's story type under that name: Product Backlog Item, Requirement, Issue) with cosine >=
   ``thresholds.extend_similarity`` is listed in ``extends_work_item_ids``, and the story's criteria
   that the item lacks (word Jaccard < ``AC_DELTA_JACCARD`` against each of its criteria) go into
   ``ac_delta``. Architecture constraints (split at ids such as "ARC-03"; table rows dropped)
   that are related to a story (cosine >= ``CONSTRAINT_RELEVANCE``) and contradicted by it (a
   value beyond a maximum or minimum stated about the same thing, or something the constraint
   rules out) set ``constraint_violation`` with a note naming the constraint.

Deterministic; no model, Usage() zero.
"""

from __future__ import annotations

import re

import numpy as np

from shared.agents import (
    EpicDraft,
    FeatureDraft,
    GenerationContext,
    GenerationDraft,
    GenerationResult,
    RetrievedChunk,
    StoryDraft,
)
from shared.analysis.capture import (
    Sentence,
    Verdict,
    classify,
    relative_to_density,
    sentences_of,
)
from shared.analysis.contradiction import (
    figures_said,
    forbidden_mentions,
    limit_violations,
    limits,
)
from shared.analysis.revision import revise_text
from shared.embeddings import Embedder
from shared.engine.offline.grouping import (
    CUE_SEED_AT,
    FRAGMENT_WORDS,
    MAX_QUOTES,
    ORPHAN_SEED_AT,
    _centroid,
    _group,
    _heading_between,
    _said_of_a_need,
    _Story,
    _unit,
    answers_how_it_is,
    describes_now,
    finding_of_another_thing,
    names_its_actor,
    open_item,
    out_of_scope,
    people_need_to,
    quote_what_is_said_between,
    states_a_need,
    tells_what_happened,
)
from shared.engine.offline.lexicon import (
    MATERIALS,
    NUMBER_WORDS,
    PERSONA_FORMS,
    is_quality_word,
    is_verb,
    leaves_out,
    reads_as_capability,
)
from shared.engine.offline.phrasing import named_before, write_story
from shared.engine.offline.statement import names_examples
from shared.engine.offline.wording import _lower_first, capital
from shared.models import FEATURE_COVERS, Engine, Segment, story_text
from shared.settings import PipelineConfig
from shared.text.language import (
    clean,
    content_words,
    is_topical,
    meaningful_word_count,
    sentence_cues,
)
from shared.text.textio import jaccard, sentence_spans

# chosen on dev by leave-one-meeting-out runs of the whole generator (docs/EVALUATION.md)
CRITERIA_AT = 0.6
# a story whose main statement gives no title is written from another of its statements only when
# that one is confident enough to start a story of its own; else its statements are evidence of
# the need before it (unless nothing is before it)
WRITE_FROM_AT = ORPHAN_SEED_AT
# ... or, said plainly as a need or a decision left out ("we don't consider teletext"), one
# confident enough to give criteria
PLAIN_WRITE_FROM_AT = CRITERIA_AT
BARE_FOLD_SIMILARITY = 0.5
# a no to a question, and what the answer says instead ("No, but the manager should be able to
# edit the text before it goes.")
_NO_BUT = re.compile(r"^(?:(?:oh|well|um|uh)\W+)*(?:no|nope)\W+but\s+\w", re.IGNORECASE)
QUESTION_ATTACH = 0.5
PARENT_REUSE_AT_LEAST = 0.70
AC_DELTA_JACCARD = 0.6
CONSTRAINT_RELEVANCE = 0.35
MAX_OPEN_QUESTIONS = 10

_CATEGORY_LABELS = {"feature_request", "constraint", "decision", "question", "action_item"}
_ID = re.compile(r"\b([A-Z]{2,6}-\d{1,4})\b")
_ID_AT_LINE_START = re.compile(r"^[ \t]*(?:[-*+]\s+)?(?:\*\*)?([A-Z]{2,6}-\d{1,4})\b", re.MULTILINE)


def _strongest(
    stories: list[_Story],
    cap: int,
    no_need: set[int] | frozenset[int] = frozenset(),
    answered: set[int] | frozenset[int] = frozenset(),
) -> tuple[list[_Story], list[_Story]]:
    """(the ``cap`` strongest stories in text order, the others): the others' statements are
    evidence of the needs kept (``_hand_over``), never dropped. A story written from one of
    ``no_need`` (the team's work, a task, a finding: never a story) takes no place under the cap
    ("Ben: confirm MDM supports the app by Friday" had cut a need of the notes); one written from
    one of ``answered`` (an answer to a question on a need or on what is left out) is kept
    first, whatever the classifier rates it."""
    never = [st for st in stories if st.writing in no_need and not st.superseded]
    # an answer to what the meeting asked ("How do they pay?" "By card online."; "Anything
    # we're not doing?" "Business permits."): rated low as said alone, a need all the same
    answers = [st for st in stories if st.writing in answered and st not in never]
    ranked = sorted(
        (st for st in stories if st not in never and st not in answers),
        key=lambda st: (-st.strength, st.members[0]),
    )
    room = max(cap - len(answers), 0)
    return sorted(ranked[:room] + answers + never, key=_said_at), ranked[room:]


def _said_at(story: _Story) -> int:
    return min(story.members + story.superseded)


def _hand_over(groups: list[list[int]], hosts: list[_Story], vectors: np.ndarray) -> set[int]:
    """Quote each group of statements as evidence of the need among ``hosts`` (in text order)
    said before it (the first when none is), or of the next with room; the indices of the hosts
    that took some."""
    took: set[int] = set()
    for left in groups:
        before = [n for n, host in enumerate(hosts) if _said_at(host) <= min(left)]
        start = before[-1] if before else 0
        for n in [*range(start, len(hosts)), *range(start)]:
            if not left:
                break
            after = hosts[n].take(left, vectors)
            if len(after) < len(left):
                took.add(n)
            left = after
    return took


class OfflineGenerator:
    version = "gen-offline-v120"
    engine: Engine = "offline"
    model: str | None = None

    def __init__(self, embedder: Embedder, cfg: PipelineConfig) -> None:
        self.embedder = embedder
        self.cfg = cfg

    def generate(self, segment: Segment, context: GenerationContext) -> GenerationResult:
        sentences = sentences_of(segment.raw_text)
        verdicts, vectors = classify(sentences, self.embedder)
        verdicts = relative_to_density(sentences, verdicts)  # a workshop is not a design chat
        verdicts = [
            Verdict("F", CUE_SEED_AT, v.p_quality)
            if v.p_requirement < CUE_SEED_AT and people_need_to(s.text)
            else v
            for s, v in zip(sentences, verdicts, strict=True)
        ]
        team_work = {
            k
            for k, s in enumerate(sentences)
            if _TEAM_WORK.search(clean(s.text))
            or _BACK_TO_TOPIC.search(clean(s.text))
            or _announces_topic(clean(s.text))
        }
        team_work |= _action_items(sentences)
        tasks = {k for k, s in enumerate(sentences) if _OWN_TASK.search(clean(s.text))}
        tasks |= {k for k, s in enumerate(sentences) if _SURVEY_SHARE.search(clean(s.text))}
        tasks |= {k for k, s in enumerate(sentences) if _task_after_but(clean(s.text))}
        grouped = _group(sentences, verdicts, vectors)
        answered = {
            st.writing
            for st in grouped
            if st.said_as is not None or out_of_scope(sentences, st.writing)
        }
        stories, cut = _strongest(
            grouped, self.cfg.generation.max_stories_per_segment, team_work | tasks, answered
        )
        persona = self.cfg.generation.default_persona
        drafted: list[tuple[_Story, StoryDraft]] = []
        waiting: list[int] = []  # talk before the segment's first need: evidence of that need
        held: list[_Story] = []  # needs with no title and nothing before them
        for st in stories:
            if not st.superseded:  # the meeting's own work: no need, and evidence of none
                if st.writing in team_work:
                    continue
                st.members = [k for k in st.members if k not in team_work | tasks]
                if not st.members:
                    continue
            readable = None  # a task taken on: what was said with it is evidence of the need before
            if st.writing not in tasks:
                readable = self._readable_draft(st, sentences, verdicts, persona, WRITE_FROM_AT)
                if readable is None and not drafted:  # nothing before it to hand its statements to
                    held.append(st)  # evidence of the next need; written itself only if none is
            if readable is not None:
                if waiting:
                    # what it has no room for waits for the next
                    waiting = st.take(waiting, vectors)
                    readable = self._draft(st, sentences, verdicts, persona)
                drafted.append((st, readable))
            else:
                # talk around a need ("for instance we see that they zap very often ..."): no
                # story of its own; its statements stay evidence of the need before it (and so
                # do the figures of a sum worked out again: "Then it's only thirteen Euros.")
                revised_away = [k for k in st.superseded if k not in st.members]
                st.members += revised_away
                before = drafted[-1][0] if drafted else None
                first = min(st.members)  # a topic it opens itself ("Assisted collections.")
                if before is None or _heading_between(sentences, before.last, first + 1):
                    # nothing before it, or a new topic opened since ("Let's talk about
                    # exams."): evidence of the next need
                    waiting.extend(st.members)
                    continue
                if len(set(before.members) | set(st.members)) > MAX_QUOTES:
                    # no room for its statements there: written from a short or a less confident
                    # one rather than lost
                    readable = self._readable_draft(
                        st, sentences, verdicts, persona, PLAIN_WRITE_FROM_AT, fragments=True
                    )
                    if readable is not None:
                        drafted.append((st, readable))
                        continue
                # no room there: evidence of the next need
                waiting += before.take(st.members, vectors)
                before.evidence.update(k for k in revised_away if k in before.members)
                drafted[-1] = (before, self._draft(before, sentences, verdicts, persona))
        if held and not drafted:
            # no need of the segment reads: the first that can be written from a weaker or a
            # short statement is its story, rather than lose what was said
            for st in held:
                readable = self._readable_draft(
                    st, sentences, verdicts, persona, 0.0, fragments=True
                )
                if readable is not None:
                    waiting = [k for k in waiting if k not in st.members]
                    drafted.append((st, readable))
                    break
        # what still waits (nothing came after it) and the needs beyond the segment's cap of
        # stories: evidence of the needs written
        leftover = [waiting] if waiting else []
        leftover += [st.members + st.superseded for st in cut]
        for n in _hand_over(leftover, [st for st, _ in drafted], vectors):
            host = drafted[n][0]
            drafted[n] = (host, self._draft(host, sentences, verdicts, persona))
        drafted = self._fold_bare(drafted, sentences, verdicts, vectors, persona)
        stories = [st for st, _ in drafted]
        # what was said between a need's quotes is quoted with it; what the need is about (its
        # feature, the questions put to it) stays what its own statements say
        between = quote_what_is_said_between(stories, sentences, verdicts, team_work | tasks)
        drafts = [
            self._draft(st, sentences, verdicts, persona) if n in between else d
            for n, (st, d) in enumerate(drafted)
        ]
        story_vecs = [
            _unit(sum(vectors[k] for k in st.members if k not in between.get(n, ())))
            for n, st in enumerate(stories)
        ]

        draft = GenerationDraft()
        questions = [
            k
            for k, s in enumerate(sentences)
            if (sentence_cues(s.text).is_open_question and verdicts[k].label == "NULL")
            or open_item(sentences, k)
        ][:MAX_OPEN_QUESTIONS]
        for k in questions:  # to the story it is about, else to the segment
            scores = [float(vectors[k] @ v) for v in story_vecs]
            if scores and max(scores) >= QUESTION_ATTACH:
                drafts[int(np.argmax(scores))].open_questions.append(sentences[k].text)
            else:
                draft.open_questions.append(sentences[k].text)
        result = GenerationResult(
            draft=draft,
            model=None,
            requirement_spans=[
                (segment.start_char + s.span.start, segment.start_char + s.span.end)
                for s, v in zip(sentences, verdicts, strict=True)
                if v.label != "NULL"
            ],
        )
        if not drafts:
            return result

        theme = segment.theme or _keywords_phrase(segment) or "this topic"
        epic = EpicDraft(
            key="E1",
            title=capital(theme),
            description=f"Stories of the meeting about {theme}.",
        )
        features = self._features(drafts, story_vecs, segment, epic.key)
        self._reuse_parents(epic, features, drafts, context)
        self._extends(drafts, context)
        self._constraints(drafts, context.architecture_chunks)
        draft.epics, draft.features, draft.stories = [epic], features, drafts
        return result

    # --------------------------------------------------------------------------------------------
    def _fold_bare(
        self,
        drafted: list[tuple[_Story, StoryDraft]],
        sentences: list[Sentence],
        verdicts: list[Verdict],
        vectors: np.ndarray,
        persona: str,
    ) -> list[tuple[_Story, StoryDraft]]:
        """A need said once, with nothing beyond its title, joins the most similar need of the
        segment (cosine >= ``BARE_FOLD_SIMILARITY``) as one of its criteria and quotes, when that
        story gains a criterion from it and says a word of the need's title; otherwise, or when it
        states a limit, it stays a story of its own."""
        if BARE_FOLD_SIMILARITY > 1.0:
            return drafted
        out = list(drafted)
        for st, d in drafted:
            if d.acceptance_criteria or len(st.members) > 1 or st.superseded or st.revisions:
                continue
            if limits(sentences[st.writing].text):
                continue  # a limit ("no more than 8 buttons") constrains the product: its own story
            if names_its_actor(sentences[st.writing].text):
                continue  # "contractors shouldn't see ...": that role's need, no detail of another
            if out_of_scope(sentences, st.writing):
                continue  # "## Won't" / "- Time-off-in-lieu.": each item a decision of its own
            if _acts(d.title) and states_a_need(sentences[st.writing].text):
                # "we have to track where people drop off, per step": an action of its own, said
                # as a need, is no detail of the checklist whose steps it names
                continue
            k = st.members[0]
            scored = [
                (float(vectors[k] @ _centroid(vectors, other)), n)
                for n, (other, _) in enumerate(out)
                if other is not st
                and len(other.members) < MAX_QUOTES
                and not out_of_scope(sentences, other.writing)  # left out: no detail joins it
            ]
            if not scored:
                continue
            best, n = max(scored)
            if best < BARE_FOLD_SIMILARITY:
                continue
            target, before = out[n]
            said = {w for m in target.members for w in content_words(sentences[m].text.lower())}
            if not set(content_words(d.title.lower())) & (
                said | set(content_words(before.title.lower()))
            ):
                # "automatic reminders" is no detail of "Set their availability for the month",
                # however alike the two sentences read
                continue
            target.quote_in_order(k)
            target.drafting.add(k)
            after = self._draft(target, sentences, verdicts, persona)
            if len(after.acceptance_criteria) <= len(before.acceptance_criteria):
                target.members.remove(k)  # nothing gained: it stays a story of its own
                target.drafting.discard(k)
                continue
            out[n] = (target, after)
            out = [(o, od) for o, od in out if o is not st]
        return out

    def _readable_draft(
        self,
        story: _Story,
        sentences: list[Sentence],
        verdicts: list[Verdict],
        persona: str,
        write_from_at: float,
        fragments: bool = False,
    ) -> StoryDraft | None:
        """The story's draft with a title that names a capability: written from its main
        statement, else from the next strongest one (confidence >= ``write_from_at``, and not a
        short fragment unless ``fragments``) that gives such a title; None when none does."""
        draft = self._draft(story, sentences, verdicts, persona)
        # "both parents should see the trip": a role's own need reads in one content word, and
        # so does what is left out ("## Won't" / "- Timesheets.": "Leave out timesheets")
        said = story.said_as or sentences[story.writing].text
        if readable(draft, names_its_actor(said) or out_of_scope(sentences, story.writing)):
            return draft
        if story.revisions or story.superseded:
            # a revision is written from the decision it revised, when that names a capability
            # (not "It's only thirteen Euros", a sum worked out again)
            return draft if reads_as_capability(draft.title) else None
        main = story.writing
        plain_from_at = min(write_from_at, PLAIN_WRITE_FROM_AT)
        for k in sorted(story.members[1:], key=lambda m: -verdicts[m].p_requirement):
            p = verdicts[k].p_requirement
            if p < plain_from_at:
                break  # a weak statement is evidence, not what a story is written from
            if not fragments and meaningful_word_count(sentences[k].text) < FRAGMENT_WORDS:
                continue  # "Or a clap .", "Sony .": a word said in passing names no need
            if _said_of_a_need(sentences[k].text):
                continue  # "I think five days is enough": said of a figure, it names no need
            plain = p >= write_from_at or states_a_need(sentences[k].text)
            # the statement the story is written from is its main quote, the one that gave no
            # title quoted with the others in text order ("Cheap." after "maybe we can make it in
            # five Euros and even less", not before it)
            kept = story.members
            story.writing, story.members = k, [k, *sorted(m for m in kept if m != k)]
            draft = self._draft(story, sentences, verdicts, persona)
            # less confident, it writes a story only when it says a need or a decision plainly
            if readable(draft) and (
                plain or leaves_out(draft.title) or draft.title.startswith("Do not ")
            ):
                return draft
            story.members = kept
        story.writing = main
        return None

    def _draft(
        self, story: _Story, sentences: list[Sentence], verdicts: list[Verdict], persona: str
    ) -> StoryDraft:
        """The story's draft: the main statement first, every other member quoted after it in
        text order, written from the later decision when the meeting revised it."""
        members = story.members
        main_text = story.written(sentences)
        if story.writing and not story.said_as:
            # "Yes, and the bank holidays, ..." "We can load those automatically": named
            main_text = named_before(main_text, sentences[story.writing - 1].text)
        if out_of_scope(sentences, story.writing) and not _SAID_AS_NO.match(clean(main_text)):
            # "## Won't" / "- Business permits." (not "No app store app, please.", said as a no)
            main_text = f"We won't do {_lower_first(main_text.strip())}"
        # what was said just before the need's own statements (not before evidence quoted from
        # far away: "The manager emails us, ..." long before "They should get a welcome email")
        first = min([m for m in members if m not in story.evidence] + story.superseded or members)
        context = [s.text for s in sentences[max(0, first - 2) : first]]
        # the figures the meeting revised away ("twenty-four hours" after "make it forty-eight"):
        # a statement that says one again ("we said text, twenty-four hours before") is
        # evidence of the need, and no criterion of it
        revised_away = figures_said(
            [sentences[k].text for k in story.superseded]
            + [sentences[m].text for m in story.revised_details]
        ) - figures_said([main_text])
        draft = write_story(
            [sentences[k].text for k in members],
            main_text=main_text,
            context=context,
            default_persona=persona,
            # a statement attached with little confidence is quoted as evidence, not drafted
            # (read at its confidence as the classifier said it: one quoted because the talk
            # around it is dense is drafted no more readily), nor does how things are now ("most
            # of the time people give us a card slip")
            criteria_from=[
                (
                    verdicts[k].p_to_write >= CRITERIA_AT
                    or k in story.drafting
                    or names_examples(sentences[k].text)  # "Allergies, inhalers, that kind of ..."
                )
                and not describes_now(sentences[k].text)
                and not tells_what_happened(sentences[k].text)  # "Last summer I was away ..."
                and not answers_how_it_is(sentences, k)
                # "Channel selection is very often used ..." under "People want a power button"
                and not finding_of_another_thing(sentences[k].text, main_text)
                and k not in story.evidence
                and not (k != story.writing and revised_away & figures_said([sentences[k].text]))
                # drafted as said with its question (below), and what a "no, but" goes on to
                # say ("No, but the manager should be able to edit the text before it goes.")
                and (k not in story.answered or bool(_NO_BUT.match(clean(sentences[k].text))))
                for k in members
            ],
            revised=[
                # a figure answered to a question, revised, is drafted with the question's words
                # ("The slots are fifteen minutes.", after "Thirty minutes." "No wait, fifteen")
                revise_text(story.answered.get(m, sentences[m].text), found)
                for m, found in sorted(story.revised_details.items())
            ]
            + [story.answered[m] for m in sorted(story.answered) if m in members],
            main_adds=story.writing != members[0] and story.writing in members,
            speaker=sentences[story.writing].speaker,
        )
        draft.superseded_quotes = [sentences[k].text for k in story.superseded]
        return draft

    # --------------------------------------------------------------------------------------------
    def _embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, getattr(self.embedder, "dimension", 1)), dtype=np.float64)
        return np.asarray(self.embedder.embed([clean(t) or t for t in texts]), dtype=np.float64)

    @staticmethod
    def _features(
        drafts: list[StoryDraft], vecs: list[np.ndarray], segment: Segment, epic_key: str
    ) -> list[FeatureDraft]:
        groups = [list(range(len(drafts)))]
        if len(drafts) > 3:
            groups = _two_clusters(np.array(vecs)) or groups
        features: list[FeatureDraft] = []
        for k, members in enumerate(groups, start=1):
            key = f"F{k}"
            quotes = " ".join(q for m in members for q in drafts[m].source_quotes)
            titles = "; ".join(drafts[m].title for m in members)
            for m in members:
                drafts[m].feature_key = key
            features.append(
                FeatureDraft(
                    key=key,
                    title=_feature_title(quotes, segment, {f.title for f in features}),
                    description=f"{FEATURE_COVERS}{titles}.",
                    epic_key=epic_key,
                )
            )
        return features

    def _reuse_parents(
        self,
        epic: EpicDraft,
        features: list[FeatureDraft],
        drafts: list[StoryDraft],
        context: GenerationContext,
    ) -> None:
        """Point a new Feature/Epic at a retrieved one that is about the same thing."""
        pairs: list[tuple[EpicDraft | FeatureDraft, str, str]] = [
            (
                f,
                f"{f.title}. " + ". ".join(d.title for d in drafts if d.feature_key == f.key),
                "Feature",
            )
            for f in features
        ]
        pairs.append((epic, f"{epic.title}. " + ". ".join(f.title for f in features), "Epic"))
        for parent, text, kind in pairs:
            items = [i for i in context.ado_items if i.work_item_type == kind]
            if not items:
                continue
            vecs = self._embed([text] + [f"{i.title}. {i.description}" for i in items])
            sims = vecs[1:] @ vecs[0]
            best = int(np.argmax(sims))
            if sims[best] >= PARENT_REUSE_AT_LEAST:
                parent.existing_work_item_id = items[best].work_item_id

    def _extends(self, drafts: list[StoryDraft], context: GenerationContext) -> None:
        existing = [i for i in context.ado_items if i.work_item_type in ("User Story", "Story")]
        if not existing or not drafts:
            return
        texts = [story_text(d.title, d.description, d.acceptance_criteria) for d in drafts]
        texts += [story_text(i.title, i.description, i.acceptance_criteria) for i in existing]
        vecs = self._embed(texts)
        sims = vecs[: len(drafts)] @ vecs[len(drafts) :].T
        threshold = self.cfg.thresholds.extend_similarity
        for k, d in enumerate(drafts):
            order = sorted(
                range(len(existing)), key=lambda j: (-sims[k, j], existing[j].work_item_id)
            )
            hits = [existing[j] for j in order if sims[k, j] >= threshold]
            d.extends_work_item_ids = [i.work_item_id for i in hits]
            if hits:
                known = hits[0].acceptance_criteria
                d.ac_delta = [
                    ac
                    for ac in d.acceptance_criteria
                    if all(jaccard(ac, old) < AC_DELTA_JACCARD for old in known)
                ]

    def _constraints(self, drafts: list[StoryDraft], chunks: list[RetrievedChunk]) -> None:
        if not self.cfg.thresholds.constraint_violation_check or not drafts or not chunks:
            return
        constraints = [c for chunk in chunks for c in _split_constraints(chunk)]
        if not constraints:
            return
        story_texts = [f"{d.title}. {' '.join(d.source_quotes)}" for d in drafts]
        vecs = self._embed(story_texts + [text for _, text in constraints])
        sims = vecs[: len(drafts)] @ vecs[len(drafts) :].T
        for k, d in enumerate(drafts):
            notes = []
            for j, (cid, ctext) in enumerate(constraints):
                if sims[k, j] < CONSTRAINT_RELEVANCE:
                    continue
                cues = limit_violations(story_texts[k], ctext) or forbidden_mentions(
                    " ".join(d.source_quotes), ctext
                )
                if cues:
                    notes.append(f"{cid}: {cues[0]} (similarity {sims[k, j]:.2f})")
            if notes:
                d.constraint_violation = True
                d.constraint_notes = notes[:3]


def _feature_title(quotes: str, segment: Segment, taken: set[str]) -> str:
    """The keyphrase these stories use most: a segment keyword they say (a two-word one first),
    else their most frequent pair of adjacent topic words, else their most frequent topic word;
    never a title already given in the segment."""
    said = content_words(quotes)
    counts = {w: said.count(w) for w in set(said) if is_topical(w)}
    scored: list[tuple[float, str]] = []
    for label in segment.intent_labels:
        words = content_words(label)
        if label in _CATEGORY_LABELS or not words or not all(w in counts for w in words):
            continue
        scored.append((sum(counts[w] for w in words) * (1.5 if len(words) > 1 else 1.0), label))
    pairs: dict[str, int] = {}
    for a, b in zip(said, said[1:], strict=False):
        if a != b and a in counts and b in counts:
            pairs[f"{a} {b}"] = pairs.get(f"{a} {b}", 0) + 1
    scored += [(1.5 * n, pair) for pair, n in pairs.items() if n >= 2]
    scored += [(float(n), w) for w, n in counts.items()]
    for _, term in sorted(scored, key=lambda st: (-st[0], st[1])):
        title = capital(term)
        if title not in taken:
            return title
    return capital(segment.dominant_intent or "Requirements")


# The meeting's own work is no need of the product ("And now we have to calculate the production
# costs", "we need to give a rating", "First we have to make a functional design", "we'll give
# it maximum points", "we should probably spend lots of time and effort in that"): said with the
# team or the speaker as its subject, it is no story ("we can calculate the VAT automatically"
# offers what the product can do: a need).
_TEAM_WORK = re.compile(
    r"\b(?:we|i|let's|you)\b(?:\W+(?!can\b|could\b)[\w']+){0,4}?\W+(?:calculate|evaluate|rate"
    r"|agree on|discuss|give (?:a rating|ratings|a score|(?:it|them)(?:\W+\w+)?\W+(?:points?"
    r"|\d+|one|two|three|four|five|six|seven))|(?:make|do) (?:a |the )?(?:functional|working"
    r"|conceptual|detailed) design|spend (?:\w+\W+){0,3}?(?:time|effort))\b",
    re.IGNORECASE,
)


# the meeting going back to, or on to, a topic ("I want to go back to cancelling, because I'm not
# sure I've got it clear", "let's come back to the colours", "can we move on to the budget"):
# asked for by the team, never said of a user ("you can go back to the main menu" is a need) or
# of what someone does ("I'll go back to stuffing receipts in an envelope")
_BACK_TO_TOPIC = re.compile(
    r"\b(?:(?:i|we)(?:'d| would)? (?:like|want) to|let's|let us|(?:can|could|shall) we)"
    r"\s+(?:just\s+)?(?:(?:go|come|get) back|move on)\s+to\b",
    re.IGNORECASE,
)


# the chair naming the next topic ("Next, the booking window and the reminders.", "Moving on to
# accessibility."): a few words that name what is discussed next, none of them a verb we know
# (a noun that is also a verb, "Next, colours.", is kept: a need missed costs more than talk
# quoted); "Next, reminders, we said text, twenty-four hours before" states a decision
_NEXT_TOPIC = re.compile(
    r"^\W*(?:(?:okay|ok|right|so|and|then|now)\W+)*(?:next(?: up| item| topic| point)?"
    r"|moving on(?: to)?|(?:now )?on to)\s*[,:]?\s+(?P<topic>[^,;:.?!]+)[.?!]*$",
    re.IGNORECASE,
)
# "the number one thing is booking", "the other big one is vaccination reminders": which need
# comes next, named before it is said
_TOPIC_IS = re.compile(
    r"^\W*(?:(?:okay|ok|right|so|and|then|now|honestly|well|um|uh)\W+)*the\s+(?:(?:number\s+one"
    r"|main|biggest|big|first|second|third|next|other|last|most\s+important)\s+)+(?:thing|one"
    r"|issue|priority|request|topic|item)\s+(?:is|was)\s*,?\s*(?:(?:um|uh|erm)\s*,?\s*)?"
    r"(?P<topic>[^,;:.?!]+)[.?!]*$",
    re.IGNORECASE,
)
_NO_TOPIC = frozenset(
    """i we you they he she it is are was were be been can could will would should must shall
    need needs want wants said say says do does did have has had go goes get gets let let's
    please slide meeting""".split()
)


def _announces_topic(text: str) -> bool:
    """Whether a sentence only names the next topic (``_NEXT_TOPIC``, ``_TOPIC_IS``)."""
    found = _NEXT_TOPIC.match(text) or _TOPIC_IS.match(text)
    if not found:
        return False
    words = re.findall(r"[\w'-]+", found.group("topic").lower())
    if not 0 < len(words) <= 6 or _NO_TOPIC.intersection(words):
        return False
    return not any(is_verb(w) for w in words)  # "Next, the system sends a reminder": a need


# notes: a section of action items, and an item marked as one, are the team's tasks ("## Next
# steps", "Action: Linda to book the next workshop", "TODO: ask the bank for the file format")
_ACTION_HEADING = re.compile(
    r"^\W*(?:action(?:s| items?| points?)?|next steps?|to ?dos?|tasks|follow[- ]?ups?)\W*$",
    re.IGNORECASE,
)
_ACTION_ITEM = re.compile(r"^\W*(?:action(?: item| point)?|ap|todo|to do)\s*[:\-]\s", re.I)


def _action_items(sentences: list[Sentence]) -> set[int]:
    """The sentences of an action-item section (from its heading to the next heading) and those
    marked as action items (``_ACTION_HEADING``, ``_ACTION_ITEM``)."""
    out: set[int] = set()
    in_section = False
    for k, sentence in enumerate(sentences):
        if sentence.line_kind == "heading":
            in_section = bool(_ACTION_HEADING.match(clean(sentence.text)))
        elif in_section or _ACTION_ITEM.match(sentence.text):
            out.add(k)
    return out


# a participant taking a task on ("I'll check with the commercial team", "you'll need to sign off
# the privacy impact assessment", "Tom will find out about log retention"): the statement opens
# with it and says nothing after a "but" ("I'll confirm it with the CFO, but put a thousand in"
# states a need). "We" only with verbs that are not also the product's ("we'll send a text").
_OPENING = (
    r"^(?:(?:so|and|then|okay|ok|right|yes|yeah|yep|sure|fine|mostly|maybe|ha|oh|well|also"
    r"|understood|good)\W+)*"
)
_NAME = (  # a participant named at the start ("Tom will ..."), not a pronoun
    r"(?!(?:it|that|this|they|he|she|there|which|what|who|we|everyone|everything)\b)"
    r"(?-i:[A-Z][a-z]+)"
)
_TAKES_ON = (
    r"(?:'ll|'d|\s+will|\s+to)\s+(?:also\s+|just\s+|then\s+|need to\s+|have to\s+|go and\s+)*"
)
_CHECK = r"check(?=\s+(?:with|whether|if|what|how|on|back|again|that with)\b|\W*$)"
_ANYONES_TASK = (  # said with "we" too
    _CHECK + r"|find out|look into|talk to|talk about|speak to|follow up|get back"
    r"|confirm (?:\w+ )?with|sign off|circulate|write up|investigate|ask around"
)
_PERSONS_TASK = r"ask|send|sort out|note|take (?:a )?notes?|email|chase|dig out"  # not "we"
# someone taking a task on ("I'll check with finance", "Tom will send the policy")
_TAKES_A_TASK = rf"(?:i|you|{_NAME}){_TAKES_ON}(?:{_ANYONES_TASK}|{_PERSONS_TASK})"
_OWN_TASK = re.compile(
    rf"{_OPENING}(?:{_TAKES_A_TASK}|we{_TAKES_ON}(?:{_ANYONES_TASK}))\b(?!.*\bbut\b)",
    re.IGNORECASE,
)

# a task taken on after a view of one's own ("I think a clear image is acceptable to HMRC now,
# but I'd need to check with the auditors.")
_TASK_AFTER_BUT = re.compile(rf",?\s+but\s+{_TAKES_A_TASK}\b(?!.*\bbut\b)", re.IGNORECASE)


def _task_after_but(text: str) -> bool:
    """Whether a sentence ends on a task someone takes on (``_TASK_AFTER_BUT``) after words
    that state no need: the meeting's own work, no need (a need before the "but" stays one: "We
    need the receipt photo, but I'll check with the auditors")."""
    task = _TASK_AFTER_BUT.search(text)
    return task is not None and not states_a_need(text[: task.start()])


# a thing left out, said as a no ("No app store app, please.", "Not the Android app.")
_SAID_AS_NO = re.compile(r"^\W*(?:no|not|none|nothing|never|without)\b", re.IGNORECASE)


# a survey finding: a share of people who do, find or want something ("Seventy five percent of
# users find most remote controls ugly", "fifty percent of the users only use ten percent of the
# buttons", "the other twenty five percent have no fashion sense"): what the meeting learnt, no
# need (a need it leads to is said after it), unless said as one ("ninety percent of users must
# finish in two minutes"); a share of a thing ("fifty percent of routine slots online") is a need
_SHARE = r"(?:\d+(?:\.\d+)?|(?:(?:and|point|" + "|".join(sorted(NUMBER_WORDS)) + r")\s+)+)"
_SURVEY_SHARE = re.compile(
    rf"\b(?:{_SHARE}\s*(?:%|percent|per cent)\s+of\s+(?:the\s+|our\s+|all\s+|those\s+)?"
    rf"(?:[\w-]+\s+){{0,2}}?(?:{PERSONA_FORMS}|people|respondents|participants|those asked"
    rf"|[\w\s-]{{0,40}}?\byear[- ]olds)\b"
    rf"|\bthe other\s+{_SHARE}\s*(?:%|percent|per cent)\b)"
    r"(?!.*\b(?:must|should|shall|ha(?:s|ve) to|needs? to)\b)",
    re.IGNORECASE,
)


# what a rule is often about, though no content word ("Limit people from the same team off")
_PEOPLE_NOUNS = frozenset("people team teams person persons".split())
# what a title that only names a thing opens with ("Provide a chat button", "Make it red")
_THING_TITLE_VERBS = frozenset("provide make keep have use put get give add build create".split())


def _acts(title: str) -> bool:
    """Whether a title opens with an action of its own ("Track where people drop off"), not a
    verb that only names a thing or a quality."""
    first = title.split()[0].lower() if title.split() else ""
    return is_verb(first) and first not in _THING_TITLE_VERBS and first != "do"


# a verb whose object is a "when" or "if" clause ("see when ...", "check if ...")
_TAKES_A_WHEN_CLAUSE = frozenset("see know check tell show ask decide choose track".split())
# a clause with a subject of its own, said after the need ("when they close the job")
_OWN_CLAUSE = re.compile(
    r"\s(?:when|whenever|once|until|before|after|if|unless|while)\s+"
    r"(?:we|they|i|you|he|she|there)(?:'re|'ll|'ve|'d|'m)?\b",
    re.IGNORECASE,
)


def readable(draft: StoryDraft, actor: bool = False) -> bool:
    """Whether a draft can stand as a story: its title names a capability in two content words
    or more, people and teams counted (one, when its statement says what a role the meeting
    names must or can do: ``actor``), or says what the product is made of or how it must be in
    one word."""
    made_of = re.fullmatch(r"Make it of (\w+)", draft.title)  # a material decided on
    if made_of and made_of.group(1) in MATERIALS:
        return True
    # how the product must be, in one word: "Make it easy to use", "Make it red"
    how = re.fullmatch(
        r"(?:Make|Keep) it (?:(?:very|really|quite|pretty) )?([\w-]+)(?: to use)?", draft.title
    )
    if how and is_quality_word(how.group(1)):
        return True
    # "Upload a photo when they close the job": the need is said before a clause of its own
    # ("Provide the television when you use it on the television" names one thing)
    own = _OWN_CLAUSE.search(draft.title)
    if own and draft.title[: own.start()].split()[-1].lower() in _TAKES_A_WHEN_CLAUSE:
        own = None  # "See when their permit expires": when it is, what is asked for
    title = draft.title[: own.start()] if own else draft.title
    said = content_words(title) + [w for w in title.lower().split() if w in _PEOPLE_NOUNS]
    if title.startswith("See "):  # "See the status": seeing is what is asked for
        said.append("see")
    return len(said) >= (1 if actor else 2) and reads_as_capability(draft.title)


def _keywords_phrase(segment: Segment) -> str:
    kws = [k for k in segment.intent_labels if k not in _CATEGORY_LABELS]
    return " and ".join(kws[:2])


def _two_clusters(vectors: np.ndarray) -> list[list[int]] | None:
    """Two groups when the stories clearly fall apart (2-means seeded by the least similar pair)."""
    sims = vectors @ vectors.T
    a, b = np.unravel_index(int(np.argmin(sims)), sims.shape)
    centres = np.array([vectors[a], vectors[b]])
    labels = np.zeros(len(vectors), dtype=int)
    for _ in range(10):
        labels = np.argmax(vectors @ centres.T, axis=1)
        if labels.min() == labels.max():
            return None
        centres = np.array([_unit(vectors[labels == c].sum(axis=0)) for c in (0, 1)])
    groups = [[i for i in range(len(vectors)) if labels[i] == c] for c in (0, 1)]
    within = np.mean([sims[i, j] for g in groups for i in g for j in g if i < j] or [1.0])
    between = np.mean([sims[i, j] for i in groups[0] for j in groups[1]])
    if within - between < 0.1:
        return None
    return sorted(groups, key=min)


def _split_constraints(chunk: RetrievedChunk) -> list[tuple[str, str]]:
    """(id, text) per numbered constraint of an architecture chunk, else per sentence."""
    text = chunk.text
    marks = list(_ID_AT_LINE_START.finditer(text)) or list(_ID.finditer(text))
    if marks:
        out = []
        for k, m in enumerate(marks):
            end = marks[k + 1].start() if k + 1 < len(marks) else len(text)
            # table rows are dropped: flattened cells ("| Titanium | yes | no |") read as nonsense
            body = re.sub(r"(?m)^\s*\|.*$", " ", text[m.end() : end])
            body = re.sub(r"[*#]+", " ", body)
            out.append((m.group(1), re.sub(r"\s+", " ", body).strip(" -:")))
        return [(cid, body) for cid, body in out if body]
    return [
        (f"{chunk.chunk_id}#{k}", text[s.start : s.end])
        for k, s in enumerate(sentence_spans(text))
        if len(text[s.start : s.end].split()) >= 4
    ]
