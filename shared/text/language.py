"""Word lists and cue patterns: the language side of the analysis, whatever the engine (the offline
agents, requirement capture, the pipeline's consolidation and keyword retrieval use it).

It owns cleaning spoken text for analysis
(AMI markers such as ``{vocalsound}``, fillers, ``T_V_``-style acronyms), content words, salient
keyphrases (TF-IDF over the transcript's units), and the cue patterns that say what a sentence is:

- ``feature_request``: modals and needs ("must", "should", "need", "want", "would like", "require"),
  the user-story form ("as a ... I want"), "users can ...", "we can have/add/train ...", imperative
  bullets ("Keep ...", "Add ...");
- ``constraint``: limits ("at least", "no more than", "maximum", "only", "must not"), quantities
  (a number with a unit, currency or percent, spoken numbers included), "No X ...", "Don't ...";
- ``decision``: "we decided", "let's go with", "we'll use", "agreed", "... is dropped";
- ``question``: a real question (ends in "?", not a tag such as "right?" or "you know?");
- ``action_item``: checkboxes, "due <date>", "I'll send / check / prepare".

Meta talk about the meeting itself ("we need to wrap up", "I have to go", "next slide") is marked so
that it never becomes a requirement. Everything is a pure function of the text: deterministic.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from shared.text.textio import clean_spoken as clean
from shared.text.textio import short_text_cache, words

# ------------------------------------------------------------------------------------------------
# word lists

STOPWORDS = frozenset(
    """a about above after again against all am an and any are aren't as at be because been before
    being below between both but by can can't cannot could couldn't did didn't do does doesn't doing
    don't down during each few for from further had hadn't has hasn't have haven't having he he'd
    he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into
    is isn't it it's its itself let's me more most mustn't my myself no nor not of off on once
    only or other ought our ours ourselves out over own same shan't she she'd she'll she's should
    shouldn't
    so some such than that that's the their theirs them themselves then there there's these they
    they'd they'll they're they've this those through to too under until up very was wasn't we we'd
    we'll we're we've were weren't what what's when when's where where's which while who who's whom
    why why's with won't would wouldn't you you'd you'll you're you've your yours yourself
    yourselves will shall must may might also just really actually basically maybe perhaps probably
    quite rather still even ever every also already yet whether though although either neither
    each much many lot lots bit thing things stuff something anything everything nothing someone
    anyone everyone one ones two way ways kind sort type types like well yes yeah yep ok okay right
    alright sure oh ah uh um mm hmm mhm huh er erm eh wow hey hi hello please thanks thank sorry
    think thought know knew known mean means meant guess say said says tell told get gets got
    getting go goes going gone went come comes came make makes made take takes took put puts see
    seen saw
    look looks looking want wants wanted need needs needed like likes liked use used using let lets
    gonna wanna gotta kinda sorta cause 'cause because probably definitely absolutely exactly
    i'd we'd you'd there'll that'll it'll now then today yesterday tomorrow time times good great
    nice fine bad better best big small little new old first second last next other another same
    different able via per etc e.g i.e vs can't won't don't doesn't didn't isn't aren't""".split()
)
# Words about the meeting itself or the story template; never keywords.
META_WORDS = frozenset(
    """meeting meetings presentation presentations slide slides agenda minutes minute project
    projects team group guys people person laptop laptops pen whiteboard board folder email mail
    question questions idea ideas point points part parts end start moment today discuss
    discussion talk talking said user users want story stories feature features requirement
    requirements due date dates note notes reminder goal""".split()
)
# Common verbs, adjectives and adverbs: they carry no topic, so they are never keywords.
GENERIC_WORDS = frozenset(
    """find found try tried trying work works worked working give gave given show showed shown
    call called keep kept turn turned change changed changing move moved moving start started hope
    hoped feel felt seem seems seemed believe wait ask asked bring brought happen happened fit hear
    heard remember forget understand agree agreed decide decided suppose supposed assume consider
    considered mention mentioned talk talked explain help helps helped add added create created
    check checked done become becomes became stay stays stayed depend depends depending fulfil
    include includes included allow allows put try tries cover covered mind meant sound sounds
    possible impossible important relevant simple easy easier easiest hard harder difficult cool
    funny interesting sure clear main whole full real true false wrong high low large long short
    quick fast slow strong weak pretty basic general special specific certain particular similar
    normal usual common typical personal individual obvious available necessary enough entire extra
    additional current present previous final total overall ready able willing happy sad terrible
    awful horrible strange weird crazy fancy lovely beautiful ugly boring fun awesome perfect else
    anyway anyhow somehow somewhere anywhere everywhere always never often sometimes usually again
    together instead otherwise almost indeed course fact case example instance sense problem reason
    answer yeah kay gonna wanna bye etcetera whatever whoever various several certain likely
    unlikely definitely mostly exact less least lot important interesting idea thanks""".split()
)
SHORT_TERMS = frozenset("tv ui ux ir pc ai os db qa hd id 3d ml ar vr".split())
FILLER_SENTENCES = frozenset(
    "yeah yes okay ok right mm hmm uh um so well alright sure no oh ah mm-hmm uh-huh".split()
)


def lemma(word: str) -> str:
    """Plural to singular, enough to count 'buttons' and 'button' together."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "'s")):
        return word[:-1]
    return word


def analysis_words(text: str) -> list[str]:
    """Lowercase words of the cleaned text (markers, fillers and acronym underscores gone)."""
    return words(clean(text))


def is_content(word: str) -> bool:
    return (
        (len(word) >= 3 or word in SHORT_TERMS)
        and word not in STOPWORDS
        and word not in META_WORDS
        and not word.isdigit()
        and not word.endswith("'s")
    )


def is_topical(word: str) -> bool:
    """A content word that can name a topic (keywords, themes): no generic verbs or adjectives."""
    return is_content(word) and word not in GENERIC_WORDS and not word.endswith("ly")


def content_words(text: str) -> list[str]:
    return list(_content_words(text))


@short_text_cache()
def _content_words(text: str) -> tuple[str, ...]:
    return tuple(lemma(w) for w in analysis_words(text) if is_content(w))


def meaningful_word_count(text: str) -> int:
    """Words that are not fillers (what 'fewer than 5 words' counts)."""
    return sum(1 for w in analysis_words(text) if w not in FILLER_SENTENCES)


# ------------------------------------------------------------------------------------------------
# cue patterns (matched on the cleaned, lowercased sentence)

_NUMBER_WORD = (
    r"(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen"
    r"|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty"
    r"|ninety|hundred|thousand|half)"
)
UNIT_WORDS = (
    r"(?:%|percent|per cent|eur|euros?|€|\$|usd|dollars?|pounds?|£|cents?|ms|milliseconds?|s|secs?"
    r"|seconds?|mins?|minutes?|h|hours?|days?|weeks?|months?|years?|g|grams?|kg|kilos?|mm|cm|m"
    r"|metres?|meters?|inch(?:es)?|ua|ma|mah|v|volts?|buttons?|keys?|channels?|colou?rs?|users?"
    r"|profiles?|words?|brands?|units?|batteries|cells?|languages?|steps?|clicks?|items?)"
)
QUANTITY = re.compile(
    rf"(?:[€$£]\s?\d|\b\d+(?:[.,]\d+)?\s*{UNIT_WORDS}\b|\b{_NUMBER_WORD}(?:[ -]{_NUMBER_WORD})*"
    rf"(?: point {_NUMBER_WORD})?\s+{UNIT_WORDS}\b|\b\d+(?:[.,]\d+)?\s*%)"
)
_MODAL = re.compile(
    r"\b(?:must|shall|should|ought to|needs? to|needed|have to|has to|had to|got to|gotta"
    r"|would like|'d like|requires?|required|requirement|mandatory|it'?d be (?:good|nice|great) if"
    r"|it would be (?:good|nice|great) if|(?:we|you|i|they|it)(?:'ll| will)? need)\b"
)
_WANT = re.compile(
    r"\b(?:i|we|people|users?|customers?|viewers?|clients?|they|everyone|everybody|the client)"
    r"(?: all| really| also| just| do)? (?:want|wants|wanted|would want)\b"
)
_USER_STORY = re.compile(r"\bas an? [a-z][\w -]{0,40}?,? i (?:want|need|would like|can)\b")
_CAPABILITY = re.compile(
    r"\b(?:users?|viewers?|customers?|people|the user|one|you|each user|every user)"
    r" (?:can|could|should be able to|will be able to|are able to|is able to|be able to)\b"
)
_IMPERATIVE = re.compile(
    r"^(?:keep|add|support|show|display|allow|make|use|provide|include|enable|disable|offer"
    r"|remove|drop|avoid|ensure|give|let users|build|store|send|integrate|replace)\b"
)
_LEADING_NO = re.compile(r"^(?:no|without) [a-z]")
_PROHIBITION = re.compile(r"^(?:just |and |but |so )?(?:don't|do not|never|avoid) [a-z]")
_PROPOSAL = re.compile(
    r"\bwe (?:can|could)(?: also| still)? (?:have|include|add|offer|use|put|train|make|provide"
    r"|integrate|implement|build)\b"
)
_LIMIT = re.compile(
    r"\b(?:at least|at most|no more than|not more than|no less than|not less than|maximum"
    r"|minimum|max|up to|must not|mustn't|not exceed|never|limit(?:ed)?|budget|only|cheaper"
    r"|cheap|expensive|cost(?:s)?|price)\b"
)
_DECISION = re.compile(
    r"\b(?:(?:we|i) (?:have |'ve )?decided|decided to|decision|let's go (?:with|for)"
    r"|let us go (?:with|for)|let's (?:use|have|include|keep|make|take|do|stick)"
    r"|(?:we|i)(?:'ll| will| are going to|'re going to) (?:use|go with|go for|have|include|keep"
    r"|make|drop|stick|take)|agreed|we agree|settled|confirmed|(?:is|are) dropped|stays|wins"
    r"|we can go with|final decision)\b"
)
_ACTION = re.compile(
    r"^\[[ xX]\]|\b(?:action items?|to-?do|due (?:\d|by|on|next)|i'll (?:send|prepare|check|look"
    r" into|mail|email|find out)|i will (?:send|prepare|check|look into|find out)"
    r"|to check with|follow up)\b"
)
_META = re.compile(
    r"\b(?:wrap (?:it )?up|(?:need|have|got) to (?:go|leave|run)|next meeting|this meeting"
    r"|the meeting|our meeting|(?:my|the|this|next) (?:presentation|slide)|powerpoint|laptop"
    r"|the agenda|minutes left|minutes to go|lunch|coffee|move on|next point|out of time"
    r"|(?:need|have) to (?:finish|stop|hurry|close)|shared folder|project documents?|whiteboard"
    r"|drawing|draw|(?:the|my) mouse|(?:the|your) pen|introduce|introductions?|sign in|log in"
    r"|personal coach|tool training|you can see|can you see|as you can see|presentations?"
    r"|i(?:'m| am) (?:the|a|an|your)|(?:tell|show|present|explain|introduce|remind) (?:you|us)"
    r"|(?:want|like|have|need|going|got) to (?:tell|show|say|present|talk|explain|ask|hear|know"
    r"|find out|decide|think about|wait|leave|go now"
    r"|discuss|summari[sz]e|remind|mention|introduce|thank|draw|go over|begin|start|finish"
    r"|look at|point out|remember|inform|speak|do (?:my|the|this|that|it|some))"
    r"|let's (?:ask|start|begin|go over|move|see|talk|discuss|look|wait|stop|finish|get started)"
    r"|be careful)\b"
)
# "I want to ..." is usually the speaker's plan for the meeting, not a product requirement
_FIRST_PERSON_PLAN = re.compile(
    r"\bi (?:want|would like|'d like|need|have|got|wanted) to (?!implement|have|add|include|build"
    r"|make|use|propose|suggest|see (?:a|an|the)|get (?:a|an|the))"
)
_HEDGE = re.compile(r"\b(?:maybe|perhaps|i don't know|not sure|i guess|probably|might|kind of)\b")
_TAG_QUESTION = re.compile(
    r"(?:^|[\s,])(?:right|yeah|yes|okay|ok|you know|no|isn't it|is it|huh|eh|alright|all right"
    r"|don't you think|correct|true|yeah\?)\s*\?$"
)


# (pattern, weight towards REQUIREMENT_STRENGTH, category it shows)
_CUES: tuple[tuple[re.Pattern[str], float, str], ...] = (
    (_USER_STORY, 3.0, "feature_request"),
    (_MODAL, 2.0, "feature_request"),
    (_WANT, 2.0, "feature_request"),
    (_CAPABILITY, 1.5, "feature_request"),
    (_IMPERATIVE, 1.5, "feature_request"),
    (_PROPOSAL, 2.0, "feature_request"),
    (_LEADING_NO, 1.5, "constraint"),
    (_PROHIBITION, 2.0, "constraint"),
    (QUANTITY, 1.0, "constraint"),
    (_DECISION, 2.0, "decision"),
    (_HEDGE, -0.5, ""),
    (_FIRST_PERSON_PLAN, -1.5, ""),
)


# Words that name a quality rather than a function (what makes a statement an "A" more often
# than an "F"), and words of reported findings (what makes it a finding, not a need).
_QUALITY = re.compile(
    r"\b(?:easy|easier|simple|simpler|intuitive|user[- ]friendly|fast|faster|quick|slow|cheap"
    r"|cheaper|expensive|costs?|price|prices|budget|euros?|dollars?|fancy|trendy|stylish|sleek"
    r"|modern|look(?:s|ing)? (?:good|nice)|small|smaller|light|lighter|weight|heavy|robust|durable"
    r"|sturdy|strong|reliable|secure|security|safe|safety|private|privacy|gdpr|accessible"
    r"|accessibility|performance|response time|uptime|available|availability|battery life"
    r"|ergonomic|comfortable|colou?rs?|shape|size|material)\b"
)
_FINDING = re.compile(
    r"\b(?:percent|per cent|survey|surveyed|research|found (?:that|out)|we found|they found"
    r"|according to|results? (?:show|say)|statistics?|most people|users said|people said"
    r"|interviewed|the data|trends?|study|studies)\b"
)
_AGREEMENT_START = re.compile(
    r"^(?:yeah|yes|yep|okay|ok|right|alright|sure|mm|mm-hmm|uh-huh|exactly|true|good|great"
    r"|fine|cool|agreed|definitely|absolutely|of course|indeed)\b"
)
_FIRST_PERSON = re.compile(
    r"\bi (?:think|mean|guess|believe|suppose|don't know|dunno|'m not sure)\b"
)
_WE_SUBJECT = re.compile(r"\b(?:we|we'll|we're|we've|we'd|let's|our)\b")
_THEY_SUBJECT = re.compile(
    r"\b(?:people|users?|customers?|clients?|patients?|staff|employees?|managers?|admins?"
    r"|administrators?|residents?|viewers?|members?|visitors?|students?|teachers?|doctors?)\b"
)
_CONDITION = re.compile(
    r"\b(?:when|whenever|if|unless|once|after|before|within|until|as soon as)\b"
)

CUE_NAMES = (
    "user_story",
    "modal",
    "want",
    "capability",
    "imperative",
    "proposal",
    "leading_no",
    "prohibition",
    "quantity",
    "decision",
    "limit",
    "hedge",
    "first_person_plan",
    "action",
    "meta",
    "quality",
    "finding",
    "agreement_start",
    "first_person",
    "we_subject",
    "persona_subject",
    "condition",
)


def cue_flags(sentence: str) -> dict[str, bool]:
    """Which cue patterns a sentence shows (cleaned, lowercased), by name (``CUE_NAMES``): the
    lexical half of the capture classifier's features."""
    text = re.sub(r"^[-*+•]\s+", "", clean(sentence).lower())
    patterns = (
        _USER_STORY,
        _MODAL,
        _WANT,
        _CAPABILITY,
        _IMPERATIVE,
        _PROPOSAL,
        _LEADING_NO,
        _PROHIBITION,
        QUANTITY,
        _DECISION,
        _LIMIT,
        _HEDGE,
        _FIRST_PERSON_PLAN,
        _ACTION,
        _META,
        _QUALITY,
        _FINDING,
        _AGREEMENT_START,
        _FIRST_PERSON,
        _WE_SUBJECT,
        _THEY_SUBJECT,
        _CONDITION,
    )
    return {name: bool(p.search(text)) for name, p in zip(CUE_NAMES, patterns, strict=True)}


@dataclass(frozen=True)
class SentenceCues:
    """What one sentence says, as the offline agents read it."""

    categories: frozenset[str]
    strength: float  # how strongly it states a requirement; >= REQUIREMENT_STRENGTH counts
    content: tuple[str, ...]
    word_count: int
    is_question: bool
    is_meta: bool

    @property
    def is_requirement(self) -> bool:
        return (
            self.strength >= REQUIREMENT_STRENGTH
            and not self.is_question
            and not self.is_meta
            and "action_item" not in self.categories
            and self.word_count >= 5
            and len(set(self.content)) >= (1 if self.strength >= 2.5 else 2)
        )

    @property
    def is_open_question(self) -> bool:
        return self.is_question and not self.is_meta and len(set(self.content)) >= 2


REQUIREMENT_STRENGTH = 2.0


def sentence_cues(sentence: str) -> SentenceCues:
    raw = sentence.strip()
    text = clean(raw).lower()
    text = re.sub(r"^[-*+•]\s+", "", text)
    content = tuple(content_words(text))
    n_words = meaningful_word_count(text)
    is_question = text.endswith("?")
    rhetorical = is_question and (bool(_TAG_QUESTION.search(text)) or len(set(content)) < 2)
    cats: set[str] = set()
    strength = 0.0
    for pattern, weight, category in _CUES:
        if pattern.search(text):
            strength += weight
            if category:
                cats.add(category)
    limit = _LIMIT.search(text)
    if limit:  # "only" and money words are everywhere in speech: they weigh half
        strength += 0.5 if limit.group(0) in {"only", "cost", "costs", "price", "cheap"} else 1.0
        cats.add("constraint")
    if _ACTION.search(text):
        cats.add("action_item")
    if is_question and not rhetorical:
        cats = {"question"}
    meta = bool(_META.search(text)) or (is_question and rhetorical)
    return SentenceCues(
        categories=frozenset(cats),
        strength=strength,
        content=content,
        word_count=n_words,
        is_question=is_question,
        is_meta=meta,
    )


# ------------------------------------------------------------------------------------------------
# keyphrases


@dataclass
class KeywordModel:
    """TF-IDF keyphrases over a document split into units (turns or lines).

    Terms are content-word lemmas and bigrams of adjacent content words; idf is over units, so a
    word said in every other turn ("remote", "think") ranks below one said in a few ("titanium").
    """

    unit_terms: list[Counter[str]]
    idf: dict[str, float]
    doc_tf: Counter[str]
    surface: dict[str, Counter[str]] = field(default_factory=dict)

    @classmethod
    def build(cls, unit_texts: Sequence[str]) -> KeywordModel:
        unit_terms: list[Counter[str]] = []
        df: Counter[str] = Counter()
        surface: dict[str, Counter[str]] = {}
        for text in unit_texts:
            terms: Counter[str] = Counter()
            cleaned = clean(text)
            for chunk in re.split(r"[,.;:!?()\[\]\"]+", cleaned):
                prev: tuple[str, str] | None = None
                found = re.findall(r"[A-Za-z][A-Za-z0-9'-]*[A-Za-z0-9]|[A-Za-z]", chunk)
                for k, original in enumerate(found):
                    low = original.lower()
                    # mid-sentence Capitalized words are names in speech ("Sammy", "Walter")
                    name = k > 0 and original[0].isupper() and not original.isupper()
                    if not is_topical(low) or name:
                        prev = None
                        continue
                    lem = lemma(low)
                    terms[lem] += 1
                    shown = original if original.isupper() and len(original) <= 5 else low
                    surface.setdefault(lem, Counter())[shown] += 1
                    if prev is not None:
                        bigram = f"{prev[0]} {lem}"
                        terms[bigram] += 1
                        surface.setdefault(bigram, Counter())[f"{prev[1]} {shown}"] += 1
                    prev = (lem, shown)
            unit_terms.append(terms)
            df.update(terms.keys())
        n = max(len(unit_texts), 1)
        idf = {t: math.log((n + 1) / (c + 0.5)) for t, c in df.items()}
        doc_tf: Counter[str] = Counter()
        for terms in unit_terms:
            doc_tf.update(terms)
        return cls(unit_terms=unit_terms, idf=idf, doc_tf=doc_tf, surface=surface)

    def top_terms(self, units: Iterable[int], n: int = 5) -> list[str]:
        """The n most salient terms of these units (surface forms), redundant unigrams dropped."""
        tf: Counter[str] = Counter()
        for i in units:
            tf.update(self.unit_terms[i])
        scored: list[tuple[float, str]] = []
        # terms said at least twice here, unless that leaves too few
        min_count = 2 if sum(1 for c in tf.values() if c >= 2) >= n else 1
        for term, count in tf.items():
            is_bigram = " " in term
            if count < min_count or (is_bigram and count < 2):
                continue
            # salience in these units x rarity over the document x how much of the term lives here
            score = count * self.idf[term] * math.sqrt(count / self.doc_tf[term])
            if is_bigram:
                score *= 2.0
            scored.append((score, term))
        scored.sort(key=lambda st: (-st[0], st[1]))
        chosen: list[str] = []
        for _, term in scored:
            parts = set(term.split())
            if any(parts & set(c.split()) for c in chosen):
                continue  # "speech recognition" already covers "speech"
            chosen.append(term)
            if len(chosen) == n:
                break
        return [self.display(t) for t in chosen]

    def display(self, term: str) -> str:
        forms = self.surface.get(term)
        if not forms:
            return term
        return sorted(forms.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
