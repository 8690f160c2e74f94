# ruff: noqa: RUF001
"""What the persona caller says, per language: short, phone-like lines (SIM-4).

Every list holds interchangeable variants; the caller picks one with its seeded stream.
Rules the tables keep, because tests and SIM-1 rely on them:

* no digits and no number words: every number the caller says is one of its facts;
* Croatian and Russian lines avoid gendered first-person forms (past tense, "glad",
  "sure"), so one table fits any caller;
* English lines other than the closings avoid "bye", "person", "human" and "that's
  all", which simple keyword agents (like the example) read as goodbye or transfer.
"""

from __future__ import annotations

from dataclasses import dataclass

Lines = tuple[str, ...]

LANGUAGES = ("en", "de", "hr", "ru")


class UnsupportedCallerLanguage(ValueError):
    """The persona caller has no phrase tables for this language."""


@dataclass(frozen=True)
class Phrases:
    """One language's lines; fields are grouped by who uses them."""

    fillers: Lines
    hello: Lines
    still_there: Lines
    answer_leads: Lines
    dont_know: Lines
    private: Lines
    yes: Lines
    accept: Lines
    no_wrong: Lines
    push: Lines
    repeat_leads: Lines
    # the four endings
    nothing_else: Lines
    thanks_bye: Lines
    refuse: Lines
    callback: Lines
    callback_number: Lines
    transfer: Lines
    transfer_again: Lines
    bye: Lines
    give_up: Lines
    # distrustful
    who_are_you: Lines
    withhold: Lines
    why_needed: Lines
    trust: Lines
    # busy
    busy_tags: Lines
    impatient: Lines
    about_time: Lines
    already_said: Lines
    # aggressive
    aggressive_open: Lines
    hostile: Lines
    interrupt_leads: Lines
    just_do_it: Lines
    # confused
    confused_open: Lines
    clarify: Lines
    mixup_fix: Lines
    lost: Lines
    # chatty
    chatty_open: Lines
    digressions: Lines
    extras: Lines
    # the goal in the caller's words: how a first-person wish starts
    want: str
    yes_word: str
    no_word: str


EN = Phrases(
    fillers=("Um...", "Uh...", "Well...", "Hm..."),
    hello=("Hi.", "Hello.", "Hi there."),
    still_there=("Hello? Are you still there?", "Hello? Can you hear me?"),
    answer_leads=("Sure.", "Okay.", "Right.", "Let me see."),
    dont_know=("Sorry, I don't know that.", "I don't have that at hand, sorry.", "No idea, sorry."),
    private=("I'd rather not say.", "I'd rather keep that to myself."),
    yes=("Yes, that's right.", "Yes, correct.", "Yes, exactly."),
    accept=("Yes, please.", "Yes, go ahead."),
    no_wrong=("No, that's not right.", "No, that's wrong."),
    push=("So, can you do that?", "So, is that done now?", "So what happens now?"),
    repeat_leads=("Sure.", "Okay, again."),
    nothing_else=("No, that's all.", "No, that's everything."),
    thanks_bye=("Great, thanks. Bye!", "Perfect, thank you. Goodbye.", "Lovely, thanks. Bye."),
    refuse=(
        "Actually, no. I'll leave it as it is. Bye.",
        "No, thanks. I don't want that after all. Bye.",
        "Hm, no. Let's leave it. Goodbye.",
    ),
    callback=(
        "Sorry, I can't talk right now. Could you call me back later?",
        "Listen, I have to go. Can someone call me back this afternoon?",
    ),
    callback_number=("You can reach me on {value}.",),
    transfer=(
        "Can I speak to a real person, please?",
        "I'd like to talk to a human, please.",
        "Could you put me through to a representative?",
    ),
    transfer_again=(
        "I said I want to speak to a person.",
        "Please, just put me through to a human.",
    ),
    bye=("Bye.", "Goodbye.", "Thanks, bye."),
    give_up=("Forget it. I'll call another time. Bye.", "I don't have time for this. Bye."),
    who_are_you=(
        "Hello? Who am I speaking to?",
        "Wait, who is this? What company is this?",
        "Who are you, and what is this about?",
    ),
    withhold=(
        "I'm not giving you anything until I know who you are.",
        "First tell me who I'm talking to.",
    ),
    why_needed=("Why do you need that?", "What do you need that for?"),
    trust=("Okay.", "Alright, then.", "Fine."),
    busy_tags=("I'm in a hurry.", "Quickly, please.", "I haven't got long."),
    impatient=("Come on, I'm in a hurry.", "Can we speed this up?", "Quickly, please."),
    about_time=("Finally.", "About time."),
    already_said=("I already told you.", "I said that already."),
    aggressive_open=(
        "Finally! I've been trying to get through for ages.",
        "About time someone picked up.",
    ),
    hostile=(
        "This is ridiculous.",
        "Are you even listening?",
        "Unbelievable.",
        "I've been waiting forever!",
    ),
    interrupt_leads=("No, no, listen!", "Wait, stop!", "Hang on!"),
    just_do_it=("Just do it!", "Just sort it out!", "Get on with it!"),
    confused_open=(
        "I'm not sure I've got the right line.",
        "Sorry, I'm not quite sure how this works.",
    ),
    clarify=(
        "Sorry, the what?",
        "Sorry, what do you need exactly?",
        "I'm not sure I follow. What do you need from me?",
    ),
    mixup_fix=(
        "Oh wait, no, sorry, that's the other thing.",
        "No, hang on, you asked for something else.",
    ),
    lost=("Sorry, I'm a bit lost.", "Hang on, where were we?"),
    chatty_open=("Oh hello, how are you today?", "Hello, lovely to get through to someone."),
    digressions=(
        "Sorry, the dog's barking, hang on... Right, I'm back.",
        "By the way, the weather's been awful this week, hasn't it?",
        "My neighbour had the same trouble last month, funnily enough.",
        "I'm calling from the car, so bear with me.",
        "Oh, and your website is really hard to use, you know.",
    ),
    extras=(
        "It's a present for my sister, you see.",
        "I ordered it in a bit of a rush, to be honest.",
        "We're having guests over, so it matters.",
    ),
    want="I'd like to",
    yes_word="Yes",
    no_word="No",
)

DE = Phrases(
    fillers=("Äh...", "Ähm...", "Also...", "Hm..."),
    hello=("Hallo.", "Guten Tag.", "Hallo, guten Tag."),
    still_there=("Hallo? Sind Sie noch da?", "Hallo? Hören Sie mich?"),
    answer_leads=("Klar.", "Gern.", "Gut.", "Moment."),
    dont_know=(
        "Das weiß ich leider nicht.",
        "Das habe ich gerade nicht zur Hand.",
        "Keine Ahnung, tut mir leid.",
    ),
    private=("Das möchte ich lieber nicht sagen.", "Das behalte ich lieber für mich."),
    yes=("Ja, genau.", "Ja, das stimmt.", "Richtig."),
    accept=("Ja, bitte.", "Ja, machen Sie das."),
    no_wrong=("Nein, das stimmt nicht.", "Nein, das ist falsch."),
    push=("Also, geht das?", "Und, ist das jetzt erledigt?", "Und wie geht es jetzt weiter?"),
    repeat_leads=("Klar.", "Also noch mal."),
    nothing_else=("Nein, das war's.", "Nein, das ist alles."),
    thanks_bye=(
        "Super, danke. Tschüss!",
        "Perfekt, vielen Dank. Auf Wiederhören.",
        "Gut, danke. Auf Wiederhören.",
    ),
    refuse=(
        "Nein, lassen Sie mal. Ich lasse es, wie es ist. Tschüss.",
        "Nein danke, das möchte ich doch nicht. Auf Wiederhören.",
        "Hm, nein. Lassen wir das. Tschüss.",
    ),
    callback=(
        "Ich kann gerade nicht reden. Können Sie mich später zurückrufen?",
        "Ich muss los. Kann mich heute Nachmittag jemand zurückrufen?",
    ),
    callback_number=("Sie erreichen mich unter {value}.",),
    transfer=(
        "Kann ich bitte mit einem Menschen sprechen?",
        "Verbinden Sie mich bitte mit einem Mitarbeiter.",
        "Ich möchte mit einer echten Person sprechen.",
    ),
    transfer_again=(
        "Ich sagte doch, ich will mit einem Menschen sprechen.",
        "Bitte verbinden Sie mich einfach mit einem Mitarbeiter.",
    ),
    bye=("Tschüss.", "Auf Wiederhören.", "Danke, tschüss."),
    give_up=(
        "Vergessen Sie's. Ich rufe ein andermal an. Tschüss.",
        "Dafür habe ich keine Zeit. Auf Wiederhören.",
    ),
    who_are_you=(
        "Hallo? Mit wem spreche ich?",
        "Moment, wer ist da? Welche Firma?",
        "Wer sind Sie, und worum geht es?",
    ),
    withhold=(
        "Ich sage gar nichts, bevor ich weiß, wer Sie sind.",
        "Sagen Sie mir erst, mit wem ich spreche.",
    ),
    why_needed=("Wozu brauchen Sie das?", "Warum wollen Sie das wissen?"),
    trust=("Na gut.", "Also gut.", "In Ordnung."),
    busy_tags=("Ich hab's eilig.", "Bitte schnell.", "Ich habe nicht viel Zeit."),
    impatient=(
        "Geht's ein bisschen schneller?",
        "Bitte schnell, ich hab's eilig.",
        "Kommen Sie, ich habe keine Zeit.",
    ),
    about_time=("Na endlich.", "Wurde auch Zeit."),
    already_said=("Das habe ich doch schon gesagt.", "Hab ich schon gesagt."),
    aggressive_open=(
        "Endlich! Ich versuche seit Ewigkeiten, durchzukommen.",
        "Wird ja auch Zeit, dass jemand rangeht.",
    ),
    hostile=(
        "Das ist doch lächerlich.",
        "Hören Sie mir überhaupt zu?",
        "Unglaublich.",
        "Ich warte hier schon ewig!",
    ),
    interrupt_leads=("Nein, nein, hören Sie zu!", "Moment, stopp!", "Warten Sie!"),
    just_do_it=("Machen Sie es einfach!", "Erledigen Sie das einfach!"),
    confused_open=(
        "Ich weiß nicht, ob ich hier richtig bin.",
        "Entschuldigung, ich weiß nicht genau, wie das hier funktioniert.",
    ),
    clarify=(
        "Entschuldigung, die was?",
        "Wie bitte, was brauchen Sie?",
        "Ich verstehe nicht ganz. Was brauchen Sie von mir?",
    ),
    mixup_fix=(
        "Ach nein, Moment, das war was anderes.",
        "Nein, warten Sie, Sie wollten ja was anderes wissen.",
    ),
    lost=("Entschuldigung, ich komme gerade nicht mit.", "Moment, wo waren wir?"),
    chatty_open=(
        "Ach hallo, wie geht es Ihnen heute?",
        "Hallo, schön, dass ich jemanden erreiche.",
    ),
    digressions=(
        "Entschuldigung, der Hund bellt gerade, Moment... So, da bin ich wieder.",
        "Übrigens, das Wetter ist diese Woche furchtbar, oder?",
        "Meine Nachbarin hatte letzten Monat genau das gleiche Problem, witzigerweise.",
        "Ich rufe aus dem Auto an, haben Sie bitte etwas Geduld.",
        "Ach, und Ihre Webseite ist wirklich kompliziert, wissen Sie.",
    ),
    extras=(
        "Das ist ein Geschenk für meine Schwester, wissen Sie.",
        "Ich habe das ziemlich überstürzt bestellt, ehrlich gesagt.",
        "Wir bekommen Besuch, deshalb ist es mir wichtig.",
    ),
    want="Ich möchte",
    yes_word="Ja",
    no_word="Nein",
)

HR = Phrases(
    fillers=("Ovaj...", "Ono...", "Hm...", "Pa..."),
    hello=("Dobar dan.", "Halo, dobar dan.", "Dobar dan, halo."),
    still_there=("Halo? Jeste li još tu?", "Halo? Čujete li me?"),
    answer_leads=("Može.", "Dobro.", "Naravno.", "Samo malo."),
    dont_know=("To ne znam, nažalost.", "To sad nemam pri ruci.", "Nemam pojma, oprostite."),
    private=("To Vam ne želim reći.", "To radije zadržavam za sebe."),
    yes=("Da, točno.", "Da, tako je.", "Točno tako."),
    accept=("Da, molim.", "Da, samo naprijed."),
    no_wrong=("Ne, to nije točno.", "Ne, krivo."),
    push=("Dakle, može li se to napraviti?", "I, je li to sad gotovo?", "I što sad?"),
    repeat_leads=("Može.", "Dakle, ponovno."),
    nothing_else=("Ne, to je sve.", "Ne, hvala, to je to."),
    thanks_bye=("Super, hvala. Doviđenja!", "Odlično, hvala Vam. Doviđenja.", "Dobro, hvala. Bok!"),
    refuse=(
        "Ipak ne. Neka ostane kako je. Doviđenja.",
        "Ne, hvala, ipak to ne želim. Doviđenja.",
        "Hm, ne. Pustimo to. Bok.",
    ),
    callback=(
        "Sad ne mogu razgovarati. Možete li me nazvati kasnije?",
        "Moram ići. Može li me netko nazvati poslijepodne?",
    ),
    callback_number=("Možete me dobiti na {value}.",),
    transfer=(
        "Mogu li razgovarati sa živom osobom, molim Vas?",
        "Spojite me, molim Vas, s nekim od zaposlenika.",
        "Želim razgovarati s čovjekom, ne s automatom.",
    ),
    transfer_again=(
        "Ponavljam, želim razgovarati s osobom.",
        "Molim Vas, samo me spojite s nekim od zaposlenika.",
    ),
    bye=("Doviđenja.", "Bok.", "Hvala, doviđenja."),
    give_up=("Pustite. Nazvat ću drugi put. Doviđenja.", "Nemam vremena za ovo. Doviđenja."),
    who_are_you=(
        "Halo? S kim razgovaram?",
        "Čekajte, tko je to? Koja je to firma?",
        "Tko ste Vi i o čemu se radi?",
    ),
    withhold=(
        "Ne dajem nikakve podatke dok ne znam tko ste.",
        "Prvo mi recite s kim razgovaram.",
    ),
    why_needed=("Zašto Vam to treba?", "A čemu Vam to služi?"),
    trust=("Dobro.", "U redu onda.", "Dobro, može."),
    busy_tags=("Žurim se.", "Molim Vas brzo.", "Nemam puno vremena."),
    impatient=("Može malo brže?", "Molim Vas, žurim se.", "Hajde, nemam vremena."),
    about_time=("Napokon.", "Bilo je i vrijeme."),
    already_said=("To ste već čuli.", "To smo već prošli."),
    aggressive_open=(
        "Napokon! Već satima pokušavam dobiti nekoga.",
        "Bilo je i vrijeme da se netko javi.",
    ),
    hostile=(
        "Ovo je smiješno.",
        "Slušate li Vi mene uopće?",
        "Nevjerojatno.",
        "Čekam već cijelu vječnost!",
    ),
    interrupt_leads=("Ne, ne, slušajte!", "Čekajte, stanite!", "Stanite malo!"),
    just_do_it=("Samo to napravite!", "Samo to riješite!"),
    confused_open=("Oprostite, je li ovo pravi broj?", "Oprostite, ne znam baš kako ovo ide."),
    clarify=(
        "Oprostite, što?",
        "Molim? Što Vam točno treba?",
        "Ne razumijem baš. Što trebate od mene?",
    ),
    mixup_fix=("Joj, ne, čekajte, to je nešto drugo.", "Ne, čekajte, Vi ste pitali nešto drugo."),
    lost=("Oprostite, ne pratim baš.", "Čekajte, gdje smo stali?"),
    chatty_open=("Joj, dobar dan, kako ste danas?", "Dobar dan, baš lijepo da se netko javio."),
    digressions=(
        "Oprostite, pas mi laje, samo malo... Evo me opet.",
        "Usput, kakvo je ovo vrijeme ovaj tjedan, užas, zar ne?",
        "Moja susjeda je imala isti problem prošli mjesec, baš smiješno.",
        "Zovem iz auta, pa Vas molim za malo strpljenja.",
        "A i Vaša web stranica je stvarno komplicirana, znate.",
    ),
    extras=(
        "To je poklon za moju sestru, znate.",
        "Iskreno, to je bilo naručeno malo na brzinu.",
        "Dolaze nam gosti, pa mi je to važno.",
    ),
    want="Želim",
    yes_word="Da",
    no_word="Ne",
)

RU = Phrases(
    fillers=("Э-э...", "Ну...", "Хм...", "Так..."),
    hello=("Здравствуйте.", "Алло, здравствуйте.", "Добрый день."),
    still_there=("Алло? Вы ещё здесь?", "Алло? Вы меня слышите?"),
    answer_leads=("Конечно.", "Хорошо.", "Так.", "Сейчас."),
    dont_know=(
        "Этого я, к сожалению, не знаю.",
        "Этого у меня сейчас под рукой нет.",
        "Понятия не имею, извините.",
    ),
    private=("Этого я предпочитаю не говорить.", "Это я оставлю при себе."),
    yes=("Да, верно.", "Да, всё правильно.", "Именно так."),
    accept=("Да, пожалуйста.", "Да, давайте."),
    no_wrong=("Нет, это неправильно.", "Нет, это не так."),
    push=("Так это можно сделать?", "Ну что, готово?", "И что теперь?"),
    repeat_leads=("Хорошо.", "Ещё раз."),
    nothing_else=("Нет, это всё.", "Нет, спасибо, больше ничего."),
    thanks_bye=(
        "Отлично, спасибо. До свидания!",
        "Прекрасно, спасибо вам. Всего доброго.",
        "Хорошо, спасибо. До свидания.",
    ),
    refuse=(
        "Нет, знаете, пусть всё останется как есть. До свидания.",
        "Нет, спасибо, я всё-таки не хочу. До свидания.",
        "Хм, нет. Давайте не будем. Всего доброго.",
    ),
    callback=(
        "Я сейчас не могу говорить. Можете перезвонить мне позже?",
        "Мне нужно бежать. Мне может кто-нибудь перезвонить после обеда?",
    ),
    callback_number=("Мой номер — {value}.",),
    transfer=(
        "Можно поговорить с живым человеком?",
        "Соедините меня, пожалуйста, с оператором.",
        "Я хочу поговорить с сотрудником, а не с роботом.",
    ),
    transfer_again=(
        "Я же прошу соединить меня с человеком.",
        "Пожалуйста, просто соедините меня с оператором.",
    ),
    bye=("До свидания.", "Всего доброго.", "Спасибо, до свидания."),
    give_up=(
        "Ладно, забудьте. Перезвоню в другой раз. До свидания.",
        "У меня нет на это времени. До свидания.",
    ),
    who_are_you=(
        "Алло? С кем я говорю?",
        "Подождите, кто это? Что за компания?",
        "Кто вы и в чём дело?",
    ),
    withhold=(
        "Я ничего не скажу, пока не узнаю, кто вы.",
        "Сначала скажите, с кем я говорю.",
    ),
    why_needed=("А зачем вам это?", "Для чего вам это нужно?"),
    trust=("Ладно.", "Хорошо, допустим.", "Ну ладно."),
    busy_tags=("Я спешу.", "Побыстрее, пожалуйста.", "У меня мало времени."),
    impatient=(
        "Можно побыстрее?",
        "Пожалуйста, быстрее, я спешу.",
        "Давайте быстрее, у меня нет времени.",
    ),
    about_time=("Наконец-то.", "Давно пора."),
    already_said=("Вы это уже спрашивали.", "Это уже звучало."),
    aggressive_open=(
        "Наконец-то! Я целую вечность не могу до вас дозвониться.",
        "Давно пора было ответить.",
    ),
    hostile=(
        "Это просто смешно.",
        "Вы меня вообще слушаете?",
        "Невероятно.",
        "Я жду уже целую вечность!",
    ),
    interrupt_leads=("Нет-нет, послушайте!", "Стоп, подождите!", "Подождите!"),
    just_do_it=("Просто сделайте это!", "Просто решите вопрос!"),
    confused_open=(
        "Извините, это правильный номер?",
        "Простите, я не очень понимаю, как это всё работает.",
    ),
    clarify=(
        "Простите, что?",
        "Извините, а что именно вам нужно?",
        "Я не совсем понимаю. Что вам от меня нужно?",
    ),
    mixup_fix=("Ой, нет, подождите, это другое.", "Нет, стоп, вы же спрашивали о другом."),
    lost=("Простите, не успеваю за вами.", "Подождите, на чём мы остановились?"),
    chatty_open=(
        "Ой, здравствуйте, как у вас дела?",
        "Здравствуйте, как хорошо, что кто-то ответил.",
    ),
    digressions=(
        "Извините, собака лает, минутку... Всё, я снова здесь.",
        "Кстати, погода на этой неделе ужасная, правда?",
        "У моей соседки в прошлом месяце была точно такая же проблема, представляете.",
        "Я звоню из машины, так что потерпите немного.",
        "И сайт у вас, честно говоря, очень неудобный.",
    ),
    extras=(
        "Это подарок для сестры, понимаете.",
        "Честно говоря, заказ был сделан второпях.",
        "К нам приезжают гости, поэтому это важно.",
    ),
    want="Я хочу",
    yes_word="Да",
    no_word="Нет",
)

PHRASES: dict[str, Phrases] = {"en": EN, "de": DE, "hr": HR, "ru": RU}


def caller_language(language: str) -> str:
    """The caller language of a code such as 'hr' or 'en-GB'; raises for one without tables."""
    code = language.strip().lower().replace("_", "-").split("-")[0]
    if code not in PHRASES:
        raise UnsupportedCallerLanguage(
            f"the persona caller speaks {', '.join(LANGUAGES)}, not {language!r}"
        )
    return code


def phrases_for(language: str) -> Phrases:
    """The phrase table of a language code (see `caller_language`)."""
    return PHRASES[caller_language(language)]
