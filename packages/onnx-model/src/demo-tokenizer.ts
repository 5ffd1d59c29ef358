// A BERT-style WordPiece tokenizer.json for the demo transformer encoder: the
// same pipeline as real sentence-embedding models (lowercasing normaliser,
// BERT pre-tokeniser, WordPiece, [CLS] … [SEP]), with a vocabulary small
// enough for the encoder's 1,000 token embeddings. Every ASCII word has a
// tokenisation: common words are whole tokens, the rest split into letters.

const SPECIAL = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'] as const;
const WORDS = `the of and to in is it that for on with as was at by be this are from or an have not but they which you one all were
we her she there can been has more if will their would so what no when who about up out them some could into than other then
its time only new these two may first any like now my over such our man me even most made after also did many well where much
before must through back years way should because each just those how people too little state good very make world still own see
men work long get here between both life being under never day same another know while last might us great old year off come
since against go came right used take three states himself few house use during without again place american around however home
small found thought went say part once general high upon school every don does got united left number course war until always
away something fact though water less public put think almost hand enough far took head yet government system better set told
nothing night end why called didn eyes find going look asked later point knew city next program business give group toward young
days let room president side social given present several order national possible rather second face per among form important often
things looked early white case john become large big need four within felt along children saw best church ever least power
development light thing seemed family interest want members mind country area others done turned although open god service certain
kind problem began different door thus help sense means whole matter perhaps itself york times law human line above name example
action company hands local show whether five history gave today either act feet across taken past quite anything seen having death
week experience body word half really field am car words already themselves information tell college shall money period held keep
sure real probably free seems political cannot behind miss question air office making brought whose special major heard problems
federal became study ago moment available known result street economic boy position reason change south board individual job society
areas west close turn love community true court force full seem model inference queue batch vector embedding sentence text search
query document meaning similar cat dog sat mat quick brown fox jumps lazy hello`.split(/\s+/);
const PUNCTUATION = [...`.,!?'"-:;()[]{}/&%$#@*+=<>_~\``];
const DIGITS = [...'0123456789'];
const LETTERS = [...'abcdefghijklmnopqrstuvwxyz'];

/** Tokens in id order: specials, single characters, their `##` continuations, then whole words. */
export function demoVocabulary(): string[] {
  const singles = [...PUNCTUATION, ...DIGITS, ...LETTERS];
  const vocab = [...SPECIAL, ...singles, ...[...DIGITS, ...LETTERS].map((c) => `##${c}`), ...new Set(WORDS)];
  if (vocab.length > 1_000) throw new Error(`demo vocabulary has ${vocab.length} tokens; the encoder embeds 1000`);
  return vocab;
}

/** The tokenizer.json document (Hugging Face `tokenizers` format). */
export function buildDemoTokenizer(maxTokens = 128): Record<string, unknown> {
  const vocab = Object.fromEntries(demoVocabulary().map((token, id) => [token, id]));
  const special = (content: string) => ({ id: vocab[content], content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  return {
    version: '1.0',
    truncation: { direction: 'Right', max_length: maxTokens, strategy: 'LongestFirst', stride: 0 },
    padding: null,
    added_tokens: SPECIAL.map(special),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [vocab['[CLS]']], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [vocab['[SEP]']], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  };
}
