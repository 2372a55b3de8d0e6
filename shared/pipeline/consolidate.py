"""One need, one story per run: what finalize does to the stories of all segments together.

Generation runs per segment, in parallel, so a need that two segments discuss gives two stories.
Finalize (the one place that sees every part) consolidates them before writing the backlog:

1. **Merge.** A story that states the same need as an earlier story of another segment (the same
   fingerprint: the content words of its title, each compared by its first seven letters; the
   same title words; cosine >= the merge threshold between "title. main quote" texts and a
   shared topic word; or titles at cosine >= ``TITLE_SIMILARITY`` of which one's words after
   its verb are all in the other's, neither leaving out what the other provides and their main
   statements not giving figures of their own) is merged into the earlier one: quotes of both
   (in transcript order after the main one), criteria of both (near-duplicates once), open
   questions of both;
   ``merged_story_ids`` and ``merged_feature_ids`` record what was merged. When the later story
   changes a figure of the earlier one or drops it ("make it twenty", "let's not do X after
   all"), the merged story carries the later decision: its title, description and criteria, the
   earlier quotes under ``superseded_quotes`` and the "revised during the meeting" warning.
   So does a later story that sets a figure of the earlier one's main statement anew in so many
   words ("So let's make it up to five items." with "Okay, so bulky bookings are up to five items
   for thirty pounds." after "thirty pounds for up to three items": ``_decided_anew``), though
   the two read less alike; then only the earlier quotes and criteria that say the old figure
   are superseded. A later story that only sets a figure for a case ("Okay, let's change it to
   twenty minutes for rooms." with "Desks I'd keep at fifteen") joins the latest earlier story
   whose main statement says the old figure (``_figure_set_anew_of``), which keeps its criteria
   and gets the warning.
   A story written from a recap ("Okay, quick recap on the decisions", "let me read back the
   headline stuff": ``recap_spans``) restates a need said before it: it is merged into the
   earlier story whose title is nearest to its own (cosine of the titles >= ``RECAP_SIMILARITY``,
   a topic word in common, no other figure), which keeps its title and criteria and quotes the
   recap too; the recap's sentence, which sums up several needs, becomes no criterion.
   Two stories of one segment merge when their titles have the same words but for articles and
   "too" (the generator words each statement group on its own, so "a screen with a back light"
   and "screen with a back light" can both come out); the grouping kept them apart, so no
   similarity makes them one.
   The merged story keeps the tagging record of its stories that relates it to the backlog most
   (``carry_tags``): a conflict first (a person must decide), then any other tag before ``new``,
   then the higher similarity; so a merge never loses a conflict or an extend one of its stories
   found. Features of one epic with the same title words (two segments about "Channel") are one
   feature. A feature or epic left without stories or open questions is dropped, so the write
   never creates an empty parent or two features of one name under one epic.
2. **Speakers and timecodes.** Every quote gets the speaker and timecode of its transcript line
   (``textio.line_prefix``: ``Name: text``, ``[00:01:02] Name: text``).

A pure function of the parts and the transcript: finalize stays idempotent.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from shared.models import FEATURE_COVERS, GeneratedItem, OpenQuestion, SourceQuote, TaggingRecord
from shared.pipeline.generate import NO_CRITERIA_WARNING, REVISED_WARNING
from shared.text.textio import prefix_at

Embed = Callable[[Sequence[str]], np.ndarray]
MAX_MERGED_CRITERIA = 8
# fingerprints compare words by their first letters, so "speech recognition" and "speech
# recogniser" are one need (seven letters: "complete" and "complex" stay two)
STEM = 7


def annotate_quotes(transcript: str, items: list[GeneratedItem]) -> list[GeneratedItem]:
    """The items with every quote's ``speaker`` and ``timecode`` filled from its line."""

    def annotate(quote: SourceQuote) -> SourceQuote:
        if not 0 <= quote.start <= len(transcript):
            return quote
        prefix = prefix_at(transcript, quote.start)
        return quote.model_copy(update={"speaker": prefix.speaker, "timecode": prefix.timecode})

    out = []
    for item in items:
        out.append(
            item.model_copy(
                update={
                    "source_quotes": [annotate(q) for q in item.source_quotes],
                    "superseded_quotes": [annotate(q) for q in item.superseded_quotes],
                    "open_questions": [
                        OpenQuestion(
                            question=q.question, quote=annotate(q.quote) if q.quote else None
                        )
                        for q in item.open_questions
                    ],
                }
            )
        )
    return out


def fingerprint(title: str) -> frozenset[str]:
    from shared.text.language import content_words, is_topical

    return frozenset(w for w in content_words(title) if is_topical(w))


def main_text(story: GeneratedItem) -> str:
    """What ``merge_duplicates`` compares: the title and the first quote."""
    return f"{story.title}. {story.source_quotes[0].text}"


def merge_duplicates(
    items: list[GeneratedItem], embed: Embed, threshold: float, transcript: str = ""
) -> list[GeneratedItem]:
    """The items with every story that repeats an earlier story merged into it and the features
    of one epic with the same title merged (see the module docstring); empty features and epics
    dropped. ``transcript``: where the recaps are found (none without it)."""
    stories = [i for i in items if i.type == "User Story"]
    if len(stories) >= 2:
        items = _merge_stories(items, stories, embed, threshold, recap_spans(transcript))
    return _drop_empty_parents(_covers(_merge_features(items)))


def _merge_stories(
    items: list[GeneratedItem],
    stories: list[GeneratedItem],
    embed: Embed,
    threshold: float,
    recaps: Sequence[tuple[int, int]] = (),
) -> list[GeneratedItem]:
    """The items with every story that repeats an earlier one merged into it."""
    from shared.analysis.contradiction import number_cues
    from shared.analysis.revision import revision

    vectors = np.asarray(embed([main_text(s) for s in stories]), dtype=np.float64)
    sims = vectors @ vectors.T
    prints = [fingerprint(s.title) for s in stories]
    stems = [frozenset(w[:STEM] for w in p) for p in prints]
    words = [_words(s.title) for s in stories]
    merged_into: dict[int, int] = {}
    result: dict[int, GeneratedItem] = {k: s for k, s in enumerate(stories)}
    after = [_after_verb(s.title) for s in stories]
    leaves = [bool(_LEAVES_OUT.match(s.title)) for s in stories]
    titles: list[np.ndarray] = []  # the titles' vectors (unit, as the port gives them), lazily

    def title_vectors() -> np.ndarray:
        if not titles:
            titles.append(np.asarray(embed([s.title for s in stories]), dtype=np.float64))
        return titles[0]

    def titled(i: int, j: int) -> bool:
        """Whether story ``j``'s title names story ``i``'s need in other words: the words of one
        after its verb all in the other's (two at least), the same polarity, and titles this
        close."""
        small, large = sorted((after[i], after[j]), key=len)
        if len(small) < 2 or not small <= large or leaves[i] != leaves[j]:
            return False
        vectors = title_vectors()
        return float(vectors[i] @ vectors[j]) >= TITLE_SIMILARITY

    for j in range(1, len(stories)):
        host = next(
            (
                i
                for i in reversed(range(j))
                if i not in merged_into
                and stories[i].segment_id != stories[j].segment_id
                and _figure_set_anew_of(result[i], stories[j])
            ),
            None,
        )
        if host is not None:
            # "If nobody checks in within fifteen minutes of the start, the booking's released"
            # ... (a later segment) "Okay, let's change it to twenty minutes for rooms." "Desks
            # I'd keep at fifteen, ...": what "it" is, with its figure set anew for a case; the
            # reviewer is warned, the earlier criteria stay
            result[host] = _merge(result[host], stories[j], revised=False)
            result[host] = result[host].model_copy(
                update={
                    "warnings": [
                        *result[host].warnings,
                        f"{REVISED_WARNING}: {stories[j].item_id} (later in the meeting) set a "
                        f"figure of {result[host].item_id} anew; check its criteria",
                    ]
                }
            )
            merged_into[j] = host
            continue
        for i in range(j):
            if i in merged_into:
                continue
            same_words, by_title = words[i] == words[j], False
            if stories[i].segment_id == stories[j].segment_id:
                # the generator already kept them apart: only the same words make them one
                # ("Sign themselves up for shifts" is not "Sign someone up for a shift")
                if not same_words:
                    continue
            else:
                same_print = len(prints[i]) >= 2 and stems[i] == stems[j]
                similar = sims[i, j] >= threshold and bool(prints[i] & prints[j])
                by_title = not (same_print or similar or same_words) and titled(i, j)
                if not (same_print or similar or same_words or by_title):
                    decided = _decided_anew(result[i], stories[j])
                    if decided is not None:
                        # "Okay, thirty pounds for up to three items per booking." ... "So let's
                        # make it up to five items." "Okay, so bulky bookings are up to five
                        # items for thirty pounds.": the figure of the need, set anew
                        result[i] = _merge(result[i], stories[j], revised=True, changed=decided)
                        merged_into[j] = i
                        break
                    continue
            earlier, later = result[i], stories[j]
            found = revision(earlier.source_quotes[0].text, later.source_quotes[0].text)
            if found is None and number_cues(earlier.title, later.title):
                break  # the same words about other figures: two needs, not one
            if found is not None and by_title:
                # "A reminder to the approver after three days." and "... two days before
                # the cut-off": titles alike, each with figures of its own, two rules
                continue
            result[i] = _merge(earlier, later, revised=found is not None)
            merged_into[j] = i
            break
        if j not in merged_into and recaps:
            host = _recapped(stories, j, stems, recaps, merged_into, title_vectors)
            if host is not None:
                result[host] = _merge(result[host], stories[j], revised=False, recap=True)
                merged_into[j] = host
    kept = {s.item_id: result[k] for k, s in enumerate(stories) if k not in merged_into}
    return [
        kept[i.item_id] if i.type == "User Story" else i
        for i in items
        if i.type != "User Story" or i.item_id in kept
    ]


# titles this close (packaged MiniLM) name one need when the words of one after its verb are all
# in the other ("Provide a screen with a back light", "Provide a back light"; "Do something with
# voice recognition", "Provide voice recognition"): on dev the cross-segment pairs at 0.82 and
# above with that were the same need; "Send reminder texts", "Send reminders by email" are two
TITLE_SIMILARITY = 0.82
# a title that leaves something out ("Leave out special colour" is no "Provide special colour")
_LEAVES_OUT = re.compile(
    r"^(?:do not|don't|never|no|leave out|drop|remove|stop|avoid|forget)\b", re.IGNORECASE
)


def _decided_anew(earlier: GeneratedItem, later: GeneratedItem) -> tuple[str, ...] | None:
    """The figures of ``earlier``'s main statement that ``later`` (a story of a later segment)
    sets anew, or None: its main statement names every topic word of the earlier one (by their
    first letters) with other figures, and one of its statements sets one of the new figures in
    so many words ("let's make it", "actually")."""
    from shared.analysis.contradiction import number_tokens
    from shared.analysis.revision import revision, sets_a_figure
    from shared.text.language import content_words, is_topical

    old, new = earlier.source_quotes[0].text, later.source_quotes[0].text
    if not number_tokens(old) or not number_tokens(new):
        return None  # no figure to set anew (and most pairs are read no further)
    found = revision(old, new)
    if found is None or found.kind != "number" or not found.changes:
        return None
    changed = {w.lower() for pair in found.changes for part in pair for w in part.split()}
    topic = {w[:STEM] for w in content_words(old) if is_topical(w) and w not in changed}
    if not topic or not topic <= {w[:STEM] for w in content_words(new)}:
        return None
    values = [to.lower() for _, to in found.changes]
    decided = any(
        sets_a_figure(q.text) and any(v in q.text.lower() for v in values)
        for q in later.source_quotes
    )
    return tuple(frm for frm, _ in found.changes) if decided else None


def _figure_set_anew_of(earlier: GeneratedItem, later: GeneratedItem) -> bool:
    """Whether ``later`` is only a figure set anew ("Okay, let's change it to twenty minutes for
    rooms.") of a figure ``earlier``'s main statement says ("QR code check-in, fifteen minutes,
    then auto-release."), the old value said again among ``later``'s quotes ("Desks I'd keep at
    fifteen, ...")."""
    from shared.analysis.contradiction import number_tokens, quantities
    from shared.analysis.revision import leads_with_a_figure, names_only_a_figure

    said = later.source_quotes[0].text
    lead = leads_with_a_figure(said)
    if lead is None or not names_only_a_figure(lead.group("said")):
        return False
    new = quantities(lead.group("figure"))
    if not new:
        return False
    old = [  # said by the need itself, not by what is quoted with it
        q
        for q in quantities(earlier.source_quotes[0].text)
        if q.comparable(new[0]) and round(q.value, 6) != round(new[0].value, 6)
    ]
    again = {n.lower() for q in later.source_quotes[1:] for n in number_tokens(q.text)}
    return any(n.lower() in again for q in old for n in number_tokens(q.text))


def _after_verb(title: str) -> frozenset[str]:
    """The content words of a title after its first word (its verb), by their first letters."""
    from shared.text.language import content_words

    return frozenset(w[:STEM] for w in content_words(" ".join(title.split()[1:])))


def _merge_features(items: list[GeneratedItem]) -> list[GeneratedItem]:
    """Features of one epic with the same title words (two segments about "Channel") are one
    feature: the first keeps its id and place, the later ones' stories and open questions move
    to it and their ids go to its ``merged_feature_ids``."""
    first: dict[tuple[str | None, int | None, tuple[str, ...]], int] = {}
    into: dict[str, str] = {}
    out: list[GeneratedItem] = []
    for item in items:
        if item.type != "Feature":
            out.append(item)
            continue
        key = (item.epic_id, item.parent_work_item_id, tuple(_words(item.title)))
        if key not in first:
            first[key] = len(out)
            out.append(item)
            continue
        kept = out[first[key]]
        questions = list(kept.open_questions)
        questions += [
            q for q in item.open_questions if all(q.question != k.question for k in questions)
        ]
        out[first[key]] = kept.model_copy(
            update={
                "open_questions": questions,
                "merged_feature_ids": [
                    *kept.merged_feature_ids,
                    item.item_id,
                    *item.merged_feature_ids,
                ],
                "warnings": list(dict.fromkeys([*kept.warnings, *item.warnings])),
            }
        )
        into[item.item_id] = kept.item_id
    if not into:
        return items
    moved = []
    for i in out:
        if i.type == "User Story" and i.feature_id is not None and i.feature_id in into:
            i = i.model_copy(update={"feature_id": into[i.feature_id]})
        moved.append(i)
    return moved


def _covers(items: list[GeneratedItem]) -> list[GeneratedItem]:
    """Every feature described as the stories it covers names the stories it has after the
    merge ("Covers: ...; Provide a screen with a back light." once named a story merged away);
    any other description is the engine's own words and stays."""
    titles: dict[str, list[str]] = {}
    for item in items:
        if item.type == "User Story" and item.feature_id:
            titles.setdefault(item.feature_id, []).append(item.title)
    return [
        item.model_copy(
            update={"description": f"{FEATURE_COVERS}{'; '.join(titles[item.item_id])}."}
        )
        if item.type == "Feature"
        and item.description.startswith(FEATURE_COVERS)
        and titles.get(item.item_id)
        else item
        for item in items
    ]


# a recap announced: what follows restates needs said before ("Okay, quick recap on the
# decisions, then actions.", "let me read back the headline stuff", "let me try to summarise the
# big pieces"); not the meeting's own summary to write ("complete the questionnaire and some
# sort of summary")
_RECAP_OPENS = re.compile(
    r"\b(?:(?:quick|short|brief|to|let me|let's|I'll|can I|I'd like to)\s+"
    r"(?:just\s+|try\s+to\s+|quickly\s+)?"
    r"(?:recap|sum\s+(?:it\s+|this\s+|that\s+|everything\s+)?up|summari[sz]e"
    r"|read\s+(?:it\s+|that\s+|this\s+|them\s+|everything\s+)?back"
    r"|run\s+through\s+(?:what|the\s+decisions|everything))"
    r"|in\s+summary)\b",
    re.IGNORECASE,
)
# the recap is over: the meeting moves on to its actions
_RECAP_ENDS = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|right|so|good|got it)\W+)*(?:actions?|action items|next steps)\b",
    re.IGNORECASE,
)
RECAP_LINES = 12  # at most this many lines after the announcement are the recap
# another speaker's line of fewer words ("Go for it.", "You forgot duplicates.") goes on with it
RECAP_ASIDE_WORDS = 8
# cosine of two titles (packaged MiniLM) from which a recap's story restates the earlier need;
# dev meetings with a recap (clinic-booking, expense-claims, room-booking): the pairs at 0.61 and
# above were the same need, those at 0.44-0.59 were not or were the recap's other needs
RECAP_SIMILARITY = 0.6


def recap_spans(transcript: str) -> list[tuple[int, int]]:
    """The character ranges of ``transcript`` that recap the meeting: from the words that
    announce it to the last line of it (the announcer's lines, and other speakers' short ones in
    between, up to ``RECAP_LINES`` lines, until another speaker says more or the actions
    start)."""
    from shared.text.textio import line_prefix

    lines: list[tuple[int, str]] = []
    at = 0
    for line in transcript.split("\n"):
        lines.append((at, line))
        at += len(line) + 1
    spans: list[tuple[int, int]] = []
    n = 0
    while n < len(lines):
        start, line = lines[n]
        found = _RECAP_OPENS.search(line, line_prefix(line).content_at)
        n += 1
        if found is None:
            continue
        announcer = prefix_at(transcript, start).speaker
        end, taken = start + len(line), 0
        while n < len(lines) and taken < RECAP_LINES:
            at, line = lines[n]
            said = line[line_prefix(line).content_at :].strip()
            if said and (
                _RECAP_ENDS.match(said)
                or (
                    prefix_at(transcript, at).speaker != announcer
                    and len(said.split()) >= RECAP_ASIDE_WORDS
                )
            ):
                break
            end, taken, n = at + len(line), taken + bool(said), n + 1
        spans.append((start + found.start(), end))
    return spans


def _recapped(
    stories: list[GeneratedItem],
    j: int,
    stems: list[frozenset[str]],
    recaps: Sequence[tuple[int, int]],
    merged_into: dict[int, int],
    title_vectors: Callable[[], np.ndarray],
) -> int | None:
    """The earlier story that story ``j``, written from a recap, restates (see the module
    docstring), or None."""
    from shared.analysis.contradiction import number_cues

    at = stories[j].source_quotes[0].start
    recap = next((r for r in recaps if r[0] <= at < r[1]), None)
    if recap is None:
        return None
    before = [
        i
        for i in range(len(stories))
        if i != j
        and i not in merged_into
        and stories[i].source_quotes[0].start < recap[0]
        and stems[i] & stems[j]
        and not number_cues(stories[i].title, stories[j].title)
    ]
    if not before:
        return None
    vectors = title_vectors()
    sims = vectors[before] @ vectors[j]
    best = int(np.argmax(sims))
    return before[best] if sims[best] >= RECAP_SIMILARITY else None


def _merge(
    earlier: GeneratedItem,
    later: GeneratedItem,
    *,
    revised: bool,
    recap: bool = False,
    changed: tuple[str, ...] = (),
) -> GeneratedItem:
    """``later`` merged into ``earlier`` (which keeps its id, segment and place in the tree);
    ``recap``: ``later`` was written from a recap, whose criteria sum up other needs too;
    ``changed``: the figures of ``earlier`` that ``later`` sets anew, when that is all it
    revises (the earlier quotes and criteria without them stay)."""
    base, other = (later, earlier) if revised else (earlier, later)
    quotes = _unique_quotes(base.source_quotes[:1], base.source_quotes[1:], other.source_quotes)
    superseded = list(earlier.superseded_quotes) + list(later.superseded_quotes)
    warnings = list(dict.fromkeys([*earlier.warnings, *later.warnings]))

    def set_anew(text: str) -> bool:
        return any(re.search(rf"\b{re.escape(c)}\b", text, re.IGNORECASE) for c in changed)

    if revised:
        gone = [q for q in earlier.source_quotes if not changed or set_anew(q.text)]
        superseded = _unique_quotes([], superseded, gone)
        quotes = _unique_quotes(
            later.source_quotes, [q for q in earlier.source_quotes if q not in gone]
        )
        warnings.append(
            f"{REVISED_WARNING}: {later.item_id} (later in the meeting) changed what "
            f"{earlier.item_id} said; the story states the later decision"
        )
    criteria = list(base.acceptance_criteria)
    kept = [c for c in other.acceptance_criteria if changed and not set_anew(c)]
    for c in other.acceptance_criteria if not (revised or recap) else kept:
        if all(_key(c) != _key(k) for k in criteria) and len(criteria) < MAX_MERGED_CRITERIA:
            criteria.append(c)
    # a figure the meeting revised away ("twenty-four hours", superseded by "forty-eight
    # hours") is in no criterion: "we said text, twenty-four hours before" stays a quote
    from shared.analysis.contradiction import figures_said

    stale = figures_said(q.text for q in superseded) - figures_said(
        [base.source_quotes[0].text if base.source_quotes else "", base.description]
    )
    criteria = [c for c in criteria if not figures_said([c]) & stale]
    questions = list(earlier.open_questions)
    for q in later.open_questions:
        if all(q.question != k.question for k in questions):
            questions.append(q)
    return earlier.model_copy(
        update={
            "title": base.title,
            "description": base.description,
            "acceptance_criteria": criteria,
            "source_quotes": quotes,
            "superseded_quotes": [q for q in superseded if all(q.start != s.start for s in quotes)],
            "open_questions": questions,
            "merged_story_ids": [*earlier.merged_story_ids, later.item_id, *later.merged_story_ids],
            "merged_feature_ids": list(
                dict.fromkeys(
                    [
                        *earlier.merged_feature_ids,
                        *([later.feature_id] if later.feature_id else []),
                        *later.merged_feature_ids,
                    ]
                )
            ),
            "extends_work_item_ids": list(
                dict.fromkeys([*earlier.extends_work_item_ids, *later.extends_work_item_ids])
            ),
            "ac_delta_entries": list(
                {
                    (_key(d.criterion), d.work_item_id): d
                    for d in [*base.ac_delta_entries, *other.ac_delta_entries]
                }.values()
            ),
            "warnings": [
                w for w in dict.fromkeys(warnings) if w != NO_CRITERIA_WARNING or not criteria
            ],
        }
    )


_TAG_RANK = {"conflict": 2, "duplicate": 1, "extend": 1, "gap": 1, "new": 0}


def carry_tags(
    stories: Sequence[GeneratedItem], tags: dict[str, TaggingRecord]
) -> dict[str, TaggingRecord]:
    """Each story's tagging record, by story id: of the records of the story and of the stories
    merged into it, the one that relates it to the backlog most (a conflict, then another tag
    before ``new``, then the higher similarity; a failed tagging last), as the story's own."""
    out: dict[str, TaggingRecord] = {}
    for story in stories:
        found = [tags[s] for s in [story.item_id, *story.merged_story_ids] if s in tags]
        if not found:
            continue
        best = max(
            found,
            key=lambda r: (
                not r.tagging_failed,
                _TAG_RANK.get(r.decision_tag, 0),
                r.max_similarity,
            ),
        )
        if best.story_id != story.item_id:
            best = best.model_copy(
                update={"story_id": story.item_id, "segment_id": story.segment_id}
            )
        out[story.item_id] = best
    return out


def _unique_quotes(*groups: Sequence[SourceQuote]) -> list[SourceQuote]:
    """The quotes of the groups, the first group first, then the rest in transcript order, each
    span once."""
    first = list(groups[0])
    rest = sorted((q for g in groups[1:] for q in g), key=lambda q: q.start)
    out: list[SourceQuote] = []
    for q in first + rest:
        if all(not (q.start < o.end and o.start < q.end) for o in out):
            out.append(q)
    return out


_FILLED = frozenset({"a", "an", "the", "too", "also", "as", "well"})


def _words(title: str) -> list[str]:
    """The title's words without articles and "too" / "as well"."""
    return [w for w in re.findall(r"[a-z0-9']+", title.lower()) if w not in _FILLED]


def _key(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".;:! ")


def _drop_empty_parents(items: list[GeneratedItem]) -> list[GeneratedItem]:
    stories = [i for i in items if i.type == "User Story"]
    used_features = {s.feature_id for s in stories if s.feature_id}
    kept = [
        i for i in items if i.type != "Feature" or i.item_id in used_features or i.open_questions
    ]
    used_epics = {i.epic_id for i in kept if i.type != "Epic" and i.epic_id}
    return [i for i in kept if i.type != "Epic" or i.item_id in used_epics or i.open_questions]
