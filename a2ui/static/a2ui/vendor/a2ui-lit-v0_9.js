import{$b as ze,Ab as Pe,B as Ae,Bb as M,Cb as V,Db as F,E as _e,Eb as U,Fb as Y,Gb as K,Hb as Z,Ib as q,Jb as G,Kb as J,Lb as W,Mb as H,Nb as Q,Ob as X,Pb as ee,Q as $e,Qb as te,R as Ee,Rb as ie,S as Ce,Sb as re,U as T,Ub as ke,Vb as j,Wb as k,Xb as R,Yb as z,Zb as E,_b as Re,a as d,ac as D,b as we,bc as Oe,c as $,cc as Te,dc as N}from"./chunk-4JIAMBTT.js";import{g as je}from"./chunk-R6ACMAJG.js";import{d as h,j as l,m as P,n as c,q as ye}from"./chunk-56GM4OUD.js";import"./chunk-OOJM4CTU.js";function De(a,e){let t=a.componentModel.type,r=e.components.get(t);if(!r)return console.warn(`Component implementation not found for type: ${t}`),c;let o=r.tagName;if(o){let i=Ee(o);return Ce`<${i} .context=${a}></${i}>`}return c}var ae=function(a,e,t,r,o,i){function n(_){if(_!==void 0&&typeof _!="function")throw new TypeError("Function expected");return _}for(var s=r.kind,b=s==="getter"?"get":s==="setter"?"set":"value",x=!e&&a?r.static?a:a.prototype:null,g=e||(x?Object.getOwnPropertyDescriptor(x,r.name):{}),p,m=!1,u=t.length-1;u>=0;u--){var v={};for(var y in r)v[y]=y==="access"?{}:r[y];for(var y in r.access)v.access[y]=r.access[y];v.addInitializer=function(_){if(m)throw new TypeError("Cannot add initializers after decoration has completed");i.push(n(_||null))};var A=(0,t[u])(s==="accessor"?{get:g.get,set:g.set}:g[b],v);if(s==="accessor"){if(A===void 0)continue;if(A===null||typeof A!="object")throw new TypeError("Object expected");(p=n(A.get))&&(g.get=p),(p=n(A.set))&&(g.set=p),(p=n(A.init))&&o.unshift(p)}else(p=n(A))&&(s==="field"?o.unshift(p):g[b]=p)}x&&Object.defineProperty(x,r.name,g),m=!0},O=function(a,e,t){for(var r=arguments.length>2,o=0;o<e.length;o++)t=r?e[o].call(a,t):e[o].call(a);return r?t:void 0},ct=(()=>{let a=[d("a2ui-surface")],e,t=[],r,o=ye,i,n=[],s=[],b,x=[],g=[];var p=class extends o{static{r=this}constructor(){super(...arguments),this.#e=O(this,n,void 0),this.#t=(O(this,s),O(this,x,!1)),this.unsubscribe=O(this,g)}static{let m=typeof Symbol=="function"&&Symbol.metadata?Object.create(o[Symbol.metadata]??null):void 0;i=[we({type:Object})],b=[$()],ae(this,null,i,{kind:"accessor",name:"surface",static:!1,private:!1,access:{has:u=>"surface"in u,get:u=>u.surface,set:(u,v)=>{u.surface=v}},metadata:m},n,s),ae(this,null,b,{kind:"accessor",name:"_hasRoot",static:!1,private:!1,access:{has:u=>"_hasRoot"in u,get:u=>u._hasRoot,set:(u,v)=>{u._hasRoot=v}},metadata:m},x,g),ae(null,e={value:r},a,{kind:"class",name:r.name,metadata:m},null,t),p=r=e.value,m&&Object.defineProperty(r,Symbol.metadata,{enumerable:!0,configurable:!0,writable:!0,value:m}),O(r,t)}#e;get surface(){return this.#e}set surface(m){this.#e=m}#t;get _hasRoot(){return this.#t}set _hasRoot(m){this.#t=m}willUpdate(m){if(m.has("surface")&&(this.unsubscribe&&(this.unsubscribe(),this.unsubscribe=void 0),this._hasRoot=!!this.surface?.componentsModel.get("root"),this.surface&&!this._hasRoot)){let u=this.surface.componentsModel.onCreated.subscribe(v=>{v.id==="root"&&(this._hasRoot=!0,this.requestUpdate(),this.unsubscribe?.(),this.unsubscribe=void 0)});this.unsubscribe=()=>u.unsubscribe()}}disconnectedCallback(){super.disconnectedCallback(),this.unsubscribe&&(this.unsubscribe(),this.unsubscribe=void 0)}render(){if(!this.surface)return c;if(!this._hasRoot)return l`<slot name="loading"><div>Loading surface...</div></slot>`;try{let m=new $e(this.surface,"root","/");return l`${De(m,this.surface.catalog)}`}catch(m){return console.error("Error creating root context:",m),l`<div>Error rendering surface</div>`}}};return p=r})();var Ne=Symbol.for("A2UIMarkdown");var ut={markdown:Ne};var f=class extends T{createRenderRoot(){return this}connectedCallback(){super.connectedCallback(),Te()}willUpdate(e){super.willUpdate(e);let t=this.controller?.props;t&&t.weight!==void 0?this.style.flex=String(t.weight):this.style.removeProperty("flex");let r=this.context?.theme?.primaryColor;r?(this.style.setProperty("--a2ui-color-primary",r),this.style.setProperty("--a2ui-color-primary-light",N("light",{colorVar:"--a2ui-color-primary"})),this.style.setProperty("--a2ui-color-primary-dark",N("dark",{colorVar:"--a2ui-color-primary"})),this.style.setProperty("--a2ui-color-primary-hover",N("hover",{darkVar:"--a2ui-color-primary-dark",lightVar:"--a2ui-color-primary-light"}))):(this.style.removeProperty("--a2ui-color-primary"),this.style.removeProperty("--a2ui-color-primary-light"),this.style.removeProperty("--a2ui-color-primary-dark"),this.style.removeProperty("--a2ui-color-primary-hover"))}};var Se=function(a,e,t,r){var o=arguments.length,i=o<3?e:r===null?r=Object.getOwnPropertyDescriptor(e,t):r,n;if(typeof Reflect=="object"&&typeof Reflect.decorate=="function")i=Reflect.decorate(a,e,t,r);else for(var s=a.length-1;s>=0;s--)(n=a[s])&&(i=(o<3?n(i):o>3?n(e,t,i):n(e,t))||i);return o>3&&i&&Object.defineProperty(e,t,i),i},pt=new Set(["h1","h2","h3","h4","h5","caption"]),S=class extends f{constructor(){super(...arguments),this.api=M}render(){let e=this.controller.props;if(!e)return c;let t=e.variant||"body",r=typeof e.text=="string"?e.text:String(e.text??""),o=typeof e.weight=="number"?`flex: ${e.weight};`:c;if(pt.has(t)){let n=l`${r}`;switch(t){case"h1":n=l`<h1>${r}</h1>`;break;case"h2":n=l`<h2>${r}</h2>`;break;case"h3":n=l`<h3>${r}</h3>`;break;case"h4":n=l`<h4>${r}</h4>`;break;case"h5":n=l`<h5>${r}</h5>`;break;case"caption":n=l`<em>${r}</em>`;break}return l`<span class="a2ui-text ${t}" style=${o}>${n}</span>`}let i=Oe(r,this.markdownRenderer);return l`<span class="a2ui-text ${t}" style=${o}>${i}</span>`}};S.styles=h`
    :host {
      display: contents;
    }
    .a2ui-text p,
    .a2ui-text h1,
    .a2ui-text h2,
    .a2ui-text h3,
    .a2ui-text h4,
    .a2ui-text h5,
    .a2ui-text h6,
    .a2ui-text ol,
    .a2ui-text ul,
    .a2ui-text li,
    .a2ui-text blockquote,
    .a2ui-text pre {
      margin: var(--_a2ui-text-margin, 0);
    }
    .a2ui-text {
      color: var(--_a2ui-text-color, var(--a2ui-text-color-text, var(--a2ui-color-on-background)));
    }
    .a2ui-text h1,
    .a2ui-text h2,
    .a2ui-text h3,
    .a2ui-text h4,
    .a2ui-text h5,
    .a2ui-text h6 {
      font-family: var(--a2ui-font-family-title, inherit);
      line-height: var(--a2ui-line-height-headings, 1.2);
    }
    .a2ui-text h1 {
      font-size: var(--a2ui-font-size-2xl);
    }
    .a2ui-text h2 {
      font-size: var(--a2ui-font-size-xl);
    }
    .a2ui-text h3 {
      font-size: var(--a2ui-font-size-l);
    }
    .a2ui-text p,
    .a2ui-text h4 {
      font-size: var(--a2ui-font-size-m);
    }
    .a2ui-text h5 {
      font-size: var(--a2ui-font-size-s);
    }
    .a2ui-text p {
      line-height: var(--a2ui-line-height-body, 1.5);
    }
    .a2ui-text.caption,
    .a2ui-caption {
      font-size: var(--a2ui-font-size-xs);
      color: var(--a2ui-text-caption-color, light-dark(#666, #aaa));
    }
    .a2ui-text a {
      color: var(--a2ui-text-a-color, inherit);
      font-weight: var(--a2ui-text-a-font-weight, inherit);
    }
  `;Se([je({context:ke.markdown,subscribe:!0})],S.prototype,"markdownRenderer",void 0);S=Se([d("a2ui-basic-text")],S);var Ie={...M,tagName:"a2ui-basic-text"};var w=k(class extends R{constructor(a){if(super(a),a.type!==j.ATTRIBUTE||a.name!=="class"||a.strings?.length>2)throw Error("`classMap()` can only be used in the `class` attribute and must be the only part in the attribute.")}render(a){return" "+Object.keys(a).filter(e=>a[e]).join(" ")+" "}update(a,[e]){if(this.st===void 0){this.st=new Set,a.strings!==void 0&&(this.nt=new Set(a.strings.join(" ").split(/\s/).filter(r=>r!=="")));for(let r in e)e[r]&&!this.nt?.has(r)&&this.st.add(r);return this.render(e)}let t=a.element.classList;for(let r of this.st)r in e||(t.remove(r),this.st.delete(r));for(let r in e){let o=!!e[r];o===this.st.has(r)||this.nt?.has(r)||(o?(t.add(r),this.st.add(r)):(t.remove(r),this.st.delete(r)))}return P}});var dt=function(a,e,t,r){var o=arguments.length,i=o<3?e:r===null?r=Object.getOwnPropertyDescriptor(e,t):r,n;if(typeof Reflect=="object"&&typeof Reflect.decorate=="function")i=Reflect.decorate(a,e,t,r);else for(var s=a.length-1;s>=0;s--)(n=a[s])&&(i=(o<3?n(i):o>3?n(e,t,i):n(e,t))||i);return o>3&&i&&Object.defineProperty(e,t,i),i},oe=class extends f{constructor(){super(...arguments),this.api=Q}render(){let e=this.controller.props;if(!e)return c;let t=e.isValid===!1,r=e.variant??"default",o={"a2ui-button":!0,[r]:!0,["a2ui-button-"+r]:!0};return l`
      <button
        type="button"
        class=${w(o)}
        @click=${()=>{t||e.action?.()}}
        ?disabled=${t}
      >
        ${e.child?l`${this.renderNode(e.child)}`:c}
      </button>
    `}};oe.styles=h`
    .a2ui-button {
      padding: var(
        --a2ui-button-padding,
        var(--a2ui-spacing-m, 0.5rem) var(--a2ui-spacing-l, 1rem)
      );
      border-radius: var(--a2ui-button-border-radius, var(--a2ui-spacing-s, 0.25rem));
      border: var(
        --a2ui-button-border,
        var(--a2ui-border-width, 1px) solid var(--a2ui-color-border, #ccc)
      );
      cursor: pointer;
      margin: var(--a2ui-button-margin, var(--a2ui-spacing-m, 0.5rem));
      background: var(--a2ui-button-background, var(--a2ui-color-surface, #fff));
      box-shadow: var(--a2ui-button-box-shadow, none);
      font-weight: var(--a2ui-button-font-weight, normal);
      --_a2ui-text-margin: 0;
      --_a2ui-text-color: var(--a2ui-color-on-secondary, #333);
      color: var(--_a2ui-text-color);
    }
    .a2ui-button:hover {
      background-color: var(--a2ui-color-secondary-hover, #ddd);
    }
    .a2ui-button.primary {
      background: var(--a2ui-color-primary, #17e);
      --_a2ui-text-color: var(--a2ui-color-on-primary, #fff);
      color: var(--_a2ui-text-color);
      border: none;
    }
    .a2ui-button.primary:hover {
      background-color: var(--a2ui-color-primary-hover, #fbd);
    }
    .a2ui-button.borderless {
      background: none;
      border: none;
      padding: 0;
      color: var(--a2ui-color-primary, #17e);
    }
    .a2ui-button:disabled {
      cursor: not-allowed;
      opacity: 0.5;
    }
  `;oe=dt([d("a2ui-basic-button")],oe);var Be={...Q,tagName:"a2ui-basic-button"};var ft=function(a,e,t,r){var o=arguments.length,i=o<3?e:r===null?r=Object.getOwnPropertyDescriptor(e,t):r,n;if(typeof Reflect=="object"&&typeof Reflect.decorate=="function")i=Reflect.decorate(a,e,t,r);else for(var s=a.length-1;s>=0;s--)(n=a[s])&&(i=(o<3?n(i):o>3?n(e,t,i):n(e,t))||i);return o>3&&i&&Object.defineProperty(e,t,i),i},ne=class extends f{constructor(){super(...arguments),this.api=X}render(){let e=this.controller.props;if(!e)return c;let t=e.isValid===!1,r=n=>e.setValue?.(n.target.value),o="text";e.variant==="number"&&(o="number"),e.variant==="obscured"&&(o="password");let i={"a2ui-textfield":!0,invalid:t};return l`
      ${e.label?l`<label>${e.label}</label>`:c}
      ${e.variant==="longText"?l`<textarea
            class=${w(i)}
            .value=${e.value||""}
            @input=${r}
          ></textarea>`:l`<input
            type=${o}
            class=${w(i)}
            .value=${e.value||""}
            @input=${r}
          />`}
      ${t&&e.validationErrors?.length?e.validationErrors.map(n=>l`<div class="error">${n}</div>`):c}
    `}};ne.styles=h`
    :host,
    a2ui-basic-textfield {
      display: flex;
      flex-direction: column;
      width: var(--a2ui-textfield-width, 100%);
      gap: var(--a2ui-spacing-xs, 0.25rem);
    }
    .a2ui-textfield {
      box-sizing: border-box;
      width: 100%;
      background-color: var(--a2ui-color-input, #fff);
      color: var(--a2ui-color-on-input, #333);
      border: var(--a2ui-textfield-border, var(--a2ui-border));
      border-radius: var(--a2ui-textfield-border-radius, var(--a2ui-spacing-m));
      padding: var(--a2ui-textfield-padding, var(--a2ui-spacing-m));
      font-family: inherit;
    }
    .a2ui-textfield:focus {
      outline: none;
      border-color: var(--a2ui-textfield-color-border-focus, var(--a2ui-color-primary, #17e));
    }
    .a2ui-textfield.invalid {
      border-color: var(--a2ui-textfield-color-error, red);
    }
    label {
      font-size: var(
        --a2ui-textfield-label-font-size,
        var(--a2ui-label-font-size, var(--a2ui-font-size-s))
      );
      font-weight: var(--a2ui-textfield-label-font-weight, var(--a2ui-label-font-weight, bold));
    }
    .error {
      color: var(--a2ui-textfield-color-error, red);
      font-size: var(--a2ui-font-size-xs, 0.75rem);
    }
  `;ne=ft([d("a2ui-basic-textfield")],ne);var Le={...X,tagName:"a2ui-basic-textfield"};var Me=(a,e,t)=>{let r=new Map;for(let o=e;o<=t;o++)r.set(a[o],o);return r},C=k(class extends R{constructor(a){if(super(a),a.type!==j.CHILD)throw Error("repeat() can only be used in text expressions")}dt(a,e,t){let r;t===void 0?t=e:e!==void 0&&(r=e);let o=[],i=[],n=0;for(let s of a)o[n]=r?r(s,n):n,i[n]=t(s,n),n++;return{values:i,keys:o}}render(a,e,t){return this.dt(a,e,t).values}update(a,[e,t,r]){let o=ze(a),{values:i,keys:n}=this.dt(e,t,r);if(!Array.isArray(o))return this.ut=n,i;let s=this.ut??=[],b=[],x,g,p=0,m=o.length-1,u=0,v=i.length-1;for(;p<=m&&u<=v;)if(o[p]===null)p++;else if(o[m]===null)m--;else if(s[p]===n[u])b[u]=E(o[p],i[u]),p++,u++;else if(s[m]===n[v])b[v]=E(o[m],i[v]),m--,v--;else if(s[p]===n[v])b[v]=E(o[p],i[v]),z(a,b[v+1],o[p]),p++,v--;else if(s[m]===n[u])b[u]=E(o[m],i[u]),z(a,o[p],o[m]),m--,u++;else if(x===void 0&&(x=Me(n,u,v),g=Me(s,p,m)),x.has(s[p]))if(x.has(s[m])){let y=g.get(n[u]),A=y!==void 0?o[y]:null;if(A===null){let _=z(a,o[p]);E(_,i[u]),b[u]=_}else b[u]=E(A,i[u]),z(a,o[p],A),o[y]=null;u++}else D(o[m]),m--;else D(o[p]),p++;for(;u<=v;){let y=z(a,b[v+1]);E(y,i[u]),b[u++]=y}for(;p<=m;){let y=o[p++];y!==null&&D(y)}return this.ut=n,Re(a,b),P}});var mt=function(a,e,t,r){var o=arguments.length,i=o<3?e:r===null?r=Object.getOwnPropertyDescriptor(e,t):r,n;if(typeof Reflect=="object"&&typeof Reflect.decorate=="function")i=Reflect.decorate(a,e,t,r);else for(var s=a.length-1;s>=0;s--)(n=a[s])&&(i=(o<3?n(i):o>3?n(e,t,i):n(e,t))||i);return o>3&&i&&Object.defineProperty(e,t,i),i},ht={start:"flex-start",center:"center",end:"flex-end",spaceBetween:"space-between",spaceAround:"space-around",spaceEvenly:"space-evenly",stretch:"stretch"},vt={start:"flex-start",center:"center",end:"flex-end",stretch:"stretch",baseline:"baseline"};function bt(a){return typeof a=="object"&&a!==null?`${a.basePath??""}/${a.id}`:String(a)}var se=class extends f{constructor(){super(...arguments),this.api=K}updated(e){super.updated(e);let t=this.controller.props;t&&(t.justify?this.style.justifyContent=ht[t.justify]??"flex-start":this.style.removeProperty("justify-content"),t.align?this.style.alignItems=vt[t.align]??"stretch":this.style.removeProperty("align-items"))}render(){let e=this.controller.props;if(!e)return c;let t=Array.isArray(e.children)?e.children:[];return l` ${C(t,bt,r=>l`${this.renderNode(r)}`)} `}};se.styles=h`
    :host,
    a2ui-basic-row {
      display: flex;
      flex-direction: row;
      gap: var(--a2ui-row-gap, var(--a2ui-spacing-m));
    }
  `;se=mt([d("a2ui-basic-row")],se);var Ve={...K,tagName:"a2ui-basic-row"};var gt=function(a,e,t,r){var o=arguments.length,i=o<3?e:r===null?r=Object.getOwnPropertyDescriptor(e,t):r,n;if(typeof Reflect=="object"&&typeof Reflect.decorate=="function")i=Reflect.decorate(a,e,t,r);else for(var s=a.length-1;s>=0;s--)(n=a[s])&&(i=(o<3?n(i):o>3?n(e,t,i):n(e,t))||i);return o>3&&i&&Object.defineProperty(e,t,i),i},xt={start:"flex-start",center:"center",end:"flex-end",spaceBetween:"space-between",spaceAround:"space-around",spaceEvenly:"space-evenly",stretch:"stretch"},yt={start:"flex-start",center:"center",end:"flex-end",stretch:"stretch",baseline:"baseline"};function wt(a){return typeof a=="object"&&a!==null?`${a.basePath??""}/${a.id}`:String(a)}var le=class extends f{constructor(){super(...arguments),this.api=Z}updated(e){super.updated(e);let t=this.controller.props;t&&(t.justify?this.style.justifyContent=xt[t.justify]??"flex-start":this.style.removeProperty("justify-content"),t.align?this.style.alignItems=yt[t.align]??"stretch":this.style.removeProperty("align-items"))}render(){let e=this.controller.props;if(!e)return c;let t=Array.isArray(e.children)?e.children:[];return l` ${C(t,wt,r=>l`${this.renderNode(r)}`)} `}};le.styles=h`
    :host,
    a2ui-basic-column {
      display: flex;
      flex-direction: column;
      width: var(--a2ui-column-width, 100%);
      gap: var(--a2ui-column-gap, var(--a2ui-spacing-m));
    }
  `;le=gt([d("a2ui-basic-column")],le);var Fe={...Z,tagName:"a2ui-basic-column"};var At=function(a,e,t,r){var o=arguments.length,i=o<3?e:r===null?r=Object.getOwnPropertyDescriptor(e,t):r,n;if(typeof Reflect=="object"&&typeof Reflect.decorate=="function")i=Reflect.decorate(a,e,t,r);else for(var s=a.length-1;s>=0;s--)(n=a[s])&&(i=(o<3?n(i):o>3?n(e,t,i):n(e,t))||i);return o>3&&i&&Object.defineProperty(e,t,i),i};function ce(a){return typeof a=="object"&&a!==null?`${a.basePath??""}/${a.id}`:String(a)}var ue=class extends f{constructor(){super(...arguments),this.api=q}render(){let e=this.controller.props;if(!e)return c;let t=Array.isArray(e.children)?e.children:[],r=e.listStyle,o=e.direction||"vertical";return r==="ordered"?l`
        <ol class="a2ui-list ${o}">
          ${C(t,ce,i=>l`<li>${this.renderNode(i)}</li>`)}
        </ol>
      `:r==="unordered"?l`
        <ul class="a2ui-list ${o}">
          ${C(t,ce,i=>l`<li>${this.renderNode(i)}</li>`)}
        </ul>
      `:l`
      <div class="a2ui-list ${o}">
        ${C(t,ce,i=>l`<div class="a2ui-list-item-none">${this.renderNode(i)}</div>`)}
      </div>
    `}};ue.styles=h`
    .a2ui-list {
      display: flex;
      padding-inline-start: var(--a2ui-list-padding, var(--a2ui-spacing-l, 24px));
      margin: 0;
    }
    .a2ui-list.vertical {
      flex-direction: column;
      gap: var(--a2ui-list-gap, var(--a2ui-spacing-s, 8px));
    }
    .a2ui-list.horizontal {
      flex-direction: row;
      gap: var(--a2ui-list-gap, var(--a2ui-spacing-m, 16px));
      list-style-position: inside;
    }
    .a2ui-list-item-none {
      display: block;
    }
    .horizontal .a2ui-list-item-none {
      display: inline-block;
    }
  `;ue=At([d("a2ui-list")],ue);var Ue={...q,tagName:"a2ui-list"};var Ye="important",_t=" !"+Ye,Ke=k(class extends R{constructor(a){if(super(a),a.type!==j.ATTRIBUTE||a.name!=="style"||a.strings?.length>2)throw Error("The `styleMap` directive must be used in the `style` attribute and must be the only part in the attribute.")}render(a){return Object.keys(a).reduce((e,t)=>{let r=a[t];return r==null?e:e+`${t=t.includes("-")?t:t.replace(/(?:^(webkit|moz|ms|o)|)(?=[A-Z])/g,"-$&").toLowerCase()}:${r};`},"")}update(a,[e]){let{style:t}=a.element;if(this.ft===void 0)return this.ft=new Set(Object.keys(e)),this.render(e);for(let r of this.ft)e[r]==null&&(this.ft.delete(r),r.includes("-")?t.removeProperty(r):t[r]=null);for(let r in e){let o=e[r];if(o!=null){this.ft.add(r);let i=typeof o=="string"&&o.endsWith(_t);r.includes("-")||i?t.setProperty(r,i?o.slice(0,-11):o,i?Ye:""):t[r]=o}}return P}});var $t=function(a,e,t,r){var o=arguments.length,i=o<3?e:r===null?r=Object.getOwnPropertyDescriptor(e,t):r,n;if(typeof Reflect=="object"&&typeof Reflect.decorate=="function")i=Reflect.decorate(a,e,t,r);else for(var s=a.length-1;s>=0;s--)(n=a[s])&&(i=(o<3?n(i):o>3?n(e,t,i):n(e,t))||i);return o>3&&i&&Object.defineProperty(e,t,i),i},pe=class extends f{constructor(){super(...arguments),this.api=V}render(){let e=this.controller.props;if(!e)return c;let t=e.variant||"default",r=e.fit||"cover";return l`<img
      src=${e.url}
      alt=${e.description||""}
      style=${Ke({objectFit:r})}
      class="a2ui-image ${t}"
    />`}};pe.styles=h`
    .a2ui-image {
      display: block;
      max-width: 100%;
      height: auto;
      border-radius: var(--a2ui-image-border-radius, 0);
    }
    .a2ui-image.icon {
      width: var(--a2ui-image-icon-size, 24px);
      height: var(--a2ui-image-icon-size, 24px);
    }
    .a2ui-image.avatar {
      width: var(--a2ui-image-avatar-size, 40px);
      height: var(--a2ui-image-avatar-size, 40px);
      border-radius: 50%;
    }
    .a2ui-image.smallFeature {
      max-width: var(--a2ui-image-small-feature-size, 100px);
    }
    .a2ui-image.largeFeature {
      max-height: var(--a2ui-image-large-feature-size, 400px);
    }
    .a2ui-image.header {
      height: var(--a2ui-image-header-size, 200px);
    }
  `;pe=$t([d("a2ui-image")],pe);var Ze={...V,tagName:"a2ui-image"};var Et=function(a,e,t,r){var o=arguments.length,i=o<3?e:r===null?r=Object.getOwnPropertyDescriptor(e,t):r,n;if(typeof Reflect=="object"&&typeof Reflect.decorate=="function")i=Reflect.decorate(a,e,t,r);else for(var s=a.length-1;s>=0;s--)(n=a[s])&&(i=(o<3?n(i):o>3?n(e,t,i):n(e,t))||i);return o>3&&i&&Object.defineProperty(e,t,i),i},qe={play:"play_arrow",rewind:"fast_rewind",favoriteOff:"favorite_border",starOff:"star_border"};function Ct(a){return qe[a]?qe[a]:a.replace(/[A-Z]/g,e=>`_${e.toLowerCase()}`)}var de=class extends f{constructor(){super(...arguments),this.api=F}render(){let e=this.controller.props;if(!e)return c;let t=e.name;if(typeof t=="object"&&t!==null&&"svgPath"in t){let i=t.svgPath;return l`
        <svg class="a2ui-icon svg" viewBox="0 0 24 24">
          <path d=${i}></path>
        </svg>
      `}let o=typeof t=="string"?Ct(t):"";return l`<i class="material-icons a2ui-icon">${o}</i>`}};de.styles=h`
    .a2ui-icon {
      display: inline-block;
      width: var(--a2ui-icon-size, 24px);
      height: var(--a2ui-icon-size, 24px);
      font-size: var(--a2ui-icon-size, 24px);
      font-style: normal;
      font-weight: normal;
      font-family: var(--a2ui-icon-font-family, 'Material Icons', 'Material Symbols Outlined');
      color: var(
        --a2ui-icon-color,
        var(--a2ui-text-color-text, var(--a2ui-color-on-background, #333))
      );
      font-variation-settings: var(--a2ui-icon-font-variation-settings, 'FILL' 1);
      line-height: 1;
      text-transform: none;
      letter-spacing: normal;
      word-wrap: normal;
      white-space: nowrap;
      direction: ltr;
      -webkit-font-smoothing: antialiased;
      text-rendering: optimizeLegibility;
      -moz-osx-font-smoothing: grayscale;
      font-feature-settings: 'liga';
      vertical-align: middle;
    }
    .a2ui-icon.svg {
      fill: currentColor;
    }
  `;de=Et([d("a2ui-icon")],de);var Ge={...F,tagName:"a2ui-icon"};var Pt=function(a,e,t,r){var o=arguments.length,i=o<3?e:r===null?r=Object.getOwnPropertyDescriptor(e,t):r,n;if(typeof Reflect=="object"&&typeof Reflect.decorate=="function")i=Reflect.decorate(a,e,t,r);else for(var s=a.length-1;s>=0;s--)(n=a[s])&&(i=(o<3?n(i):o>3?n(e,t,i):n(e,t))||i);return o>3&&i&&Object.defineProperty(e,t,i),i},fe=class extends f{constructor(){super(...arguments),this.api=U}render(){let e=this.controller.props;return e?l`
      <div class="a2ui-video-container">
        <video src=${e.url||c} controls class="a2ui-video">
          Your browser does not support the video tag.
        </video>
      </div>
    `:c}};fe.styles=h`
    .a2ui-video-container {
      width: 100%;
      max-width: 100%;
    }
    .a2ui-video {
      width: 100%;
      height: auto;
      display: block;
      border-radius: var(--a2ui-video-border-radius, 0);
    }
  `;fe=Pt([d("a2ui-video")],fe);var Je={...U,tagName:"a2ui-video"};var jt=function(a,e,t,r){var o=arguments.length,i=o<3?e:r===null?r=Object.getOwnPropertyDescriptor(e,t):r,n;if(typeof Reflect=="object"&&typeof Reflect.decorate=="function")i=Reflect.decorate(a,e,t,r);else for(var s=a.length-1;s>=0;s--)(n=a[s])&&(i=(o<3?n(i):o>3?n(e,t,i):n(e,t))||i);return o>3&&i&&Object.defineProperty(e,t,i),i},me=class extends f{constructor(){super(...arguments),this.api=Y}render(){let e=this.controller.props;return e?l`
      <div class="a2ui-audio-player">
        ${e.description?l`<div class="a2ui-audio-description">${e.description}</div>`:c}
        <audio src=${e.url||c} controls class="a2ui-audio">
          Your browser does not support the audio tag.
        </audio>
      </div>
    `:c}};me.styles=h`
    .a2ui-audio-player {
      display: flex;
      flex-direction: column;
      gap: var(--a2ui-spacing-xs, 0.25rem);
      background: var(--a2ui-audioplayer-background, transparent);
      border-radius: var(--a2ui-audioplayer-border-radius, 0);
      padding: var(--a2ui-audioplayer-padding, 0);
      width: 100%;
    }
    .a2ui-audio-description {
      font-size: var(--a2ui-font-size-s, 0.875rem);
      color: var(
        --a2ui-audioplayer-description-color,
        var(--a2ui-text-caption-color, light-dark(#666, #aaa))
      );
    }
    .a2ui-audio {
      width: 100%;
    }
  `;me=jt([d("a2ui-audioplayer")],me);var We={...Y,tagName:"a2ui-audioplayer"};var kt=function(a,e,t,r){var o=arguments.length,i=o<3?e:r===null?r=Object.getOwnPropertyDescriptor(e,t):r,n;if(typeof Reflect=="object"&&typeof Reflect.decorate=="function")i=Reflect.decorate(a,e,t,r);else for(var s=a.length-1;s>=0;s--)(n=a[s])&&(i=(o<3?n(i):o>3?n(e,t,i):n(e,t))||i);return o>3&&i&&Object.defineProperty(e,t,i),i},he=class extends f{constructor(){super(...arguments),this.api=G}render(){let e=this.controller.props;return e?l`
      <div class="a2ui-card">${e.child?this.renderNode(e.child):c}</div>
    `:c}};he.styles=h`
    .a2ui-card {
      padding: var(--a2ui-card-padding, var(--a2ui-spacing-m, 16px));
      border-radius: var(--a2ui-card-border-radius, var(--a2ui-border-radius, 8px));
      box-shadow: var(--a2ui-card-box-shadow, 0 2px 4px rgba(0, 0, 0, 0.1));
      background: var(--a2ui-card-background, var(--a2ui-color-surface, #fff));
      color: var(--a2ui-color-on-surface, #333);
      border: var(
        --a2ui-card-border,
        var(--a2ui-border-width, 1px) solid var(--a2ui-color-border, #ccc)
      );
      margin: var(--a2ui-card-margin, var(--a2ui-spacing-m, 16px));
    }
  `;he=kt([d("a2ui-card")],he);var He={...G,tagName:"a2ui-card"};var Rt=function(a,e,t,r){var o=arguments.length,i=o<3?e:r===null?r=Object.getOwnPropertyDescriptor(e,t):r,n;if(typeof Reflect=="object"&&typeof Reflect.decorate=="function")i=Reflect.decorate(a,e,t,r);else for(var s=a.length-1;s>=0;s--)(n=a[s])&&(i=(o<3?n(i):o>3?n(e,t,i):n(e,t))||i);return o>3&&i&&Object.defineProperty(e,t,i),i},ve=class extends f{constructor(){super(...arguments),this.api=H}render(){let e=this.controller.props;if(!e)return c;let t=e.axis??"horizontal";return l`<hr class=${w({"a2ui-divider":!0,horizontal:t==="horizontal",vertical:t==="vertical"})} />`}};ve.styles=h`
    .a2ui-divider {
      border: 0;
      border-top: var(
        --a2ui-divider-border,
        var(--a2ui-border-width, 1px) solid var(--a2ui-color-border, #ccc)
      );
      margin: var(--a2ui-divider-spacing, var(--a2ui-spacing-m, 16px)) 0;
      width: 100%;
    }
    .a2ui-divider.vertical {
      width: var(--a2ui-border-width, 1px);
      height: 100%;
      margin: 0 var(--a2ui-divider-spacing, var(--a2ui-spacing-m, 16px));
      border-top: 0;
      border-left: var(
        --a2ui-divider-border,
        var(--a2ui-border-width, 1px) solid var(--a2ui-color-border, #ccc)
      );
    }
  `;ve=Rt([d("a2ui-divider")],ve);var Qe={...H,tagName:"a2ui-divider"};var zt=function(a,e,t,r){var o=arguments.length,i=o<3?e:r===null?r=Object.getOwnPropertyDescriptor(e,t):r,n;if(typeof Reflect=="object"&&typeof Reflect.decorate=="function")i=Reflect.decorate(a,e,t,r);else for(var s=a.length-1;s>=0;s--)(n=a[s])&&(i=(o<3?n(i):o>3?n(e,t,i):n(e,t))||i);return o>3&&i&&Object.defineProperty(e,t,i),i},be=class extends f{constructor(){super(...arguments),this.api=ee}render(){let e=this.controller.props;if(!e)return c;let t=e.isValid===!1,r={"a2ui-checkbox":!0,invalid:t},o={invalid:t};return l`
      <div class="container">
        <label class=${w(r)}>
          <input
            type="checkbox"
            class=${w(o)}
            .checked=${e.value||!1}
            @change=${i=>e.setValue?.(i.target.checked)}
          />
          <span class="a2ui-check-box-text">${e.label}</span>
        </label>
        ${t&&e.validationErrors?.length?e.validationErrors.map(i=>l`<div class="error a2ui-error-message">${i}</div>`):c}
      </div>
    `}};be.styles=h`
    :host,
    a2ui-checkbox {
      display: block;
    }
    .container {
      display: flex;
      flex-direction: column;
      margin: var(--a2ui-checkbox-margin, var(--a2ui-spacing-m));
    }
    label.a2ui-checkbox {
      display: inline-flex;
      align-items: center;
      gap: var(--a2ui-checkbox-gap, var(--a2ui-spacing-s, 0.5rem));
      font-size: var(
        --a2ui-checkbox-label-font-size,
        var(--a2ui-label-font-size, var(--a2ui-font-size-s))
      );
      font-weight: var(--a2ui-checkbox-label-font-weight, var(--a2ui-label-font-weight, bold));
      cursor: pointer;
    }
    label.invalid {
      color: var(--a2ui-checkbox-color-error, red);
    }
    input {
      width: var(--a2ui-checkbox-size, 1rem);
      height: var(--a2ui-checkbox-size, 1rem);
      background: var(--a2ui-checkbox-background, inherit);
      border: var(--a2ui-checkbox-border, var(--a2ui-border));
      border-radius: var(--a2ui-checkbox-border-radius, 4px);
    }
    input.invalid {
      outline: 1px solid var(--a2ui-checkbox-color-error, red);
    }
    .error,
    .a2ui-error-message {
      color: var(--a2ui-checkbox-color-error, red);
      font-size: var(--a2ui-font-size-xs, 0.75rem);
      margin-top: 4px;
    }
  `;be=zt([d("a2ui-checkbox")],be);var Xe={...ee,tagName:"a2ui-checkbox"};var Ot=function(a,e,t,r){var o=arguments.length,i=o<3?e:r===null?r=Object.getOwnPropertyDescriptor(e,t):r,n;if(typeof Reflect=="object"&&typeof Reflect.decorate=="function")i=Reflect.decorate(a,e,t,r);else for(var s=a.length-1;s>=0;s--)(n=a[s])&&(i=(o<3?n(i):o>3?n(e,t,i):n(e,t))||i);return o>3&&i&&Object.defineProperty(e,t,i),i},ge=class extends f{constructor(){super(...arguments),this.api=ie}render(){let e=this.controller.props;return e?l`
      <div class="a2ui-slider-container">
        <div class="a2ui-slider-header">
          <span class="a2ui-slider-label">${e.label}</span>
          <span class="a2ui-slider-value">${e.value}</span>
        </div>
        <input
          type="range"
          min=${e.min??0}
          max=${e.max??100}
          .value=${e.value?.toString()||"0"}
          @input=${t=>e.setValue?.(Number(t.target.value))}
          class="a2ui-slider"
        />
      </div>
    `:c}};ge.styles=h`
    .a2ui-slider-container {
      width: 100%;
      display: flex;
      flex-direction: column;
      gap: var(--a2ui-spacing-xs, 4px);
      margin: var(--a2ui-slider-margin, var(--a2ui-spacing-m, 16px));
    }
    .a2ui-slider-header {
      display: flex;
      justify-content: space-between;
      font-size: var(
        --a2ui-slider-label-font-size,
        var(--a2ui-label-font-size, var(--a2ui-font-size-s, 14px))
      );
      font-weight: var(--a2ui-slider-label-font-weight, bold);
      color: var(--a2ui-text-color-text, var(--a2ui-color-on-background, #333));
    }
    .a2ui-slider {
      width: 100%;
      cursor: pointer;
      accent-color: var(--a2ui-slider-thumb-color, var(--a2ui-color-primary, #007bff));
      background: var(--a2ui-slider-track-color, var(--a2ui-color-secondary, #e9ecef));
    }
  `;ge=Ot([d("a2ui-slider")],ge);var et={...ie,tagName:"a2ui-slider"};var Tt=function(a,e,t,r){var o=arguments.length,i=o<3?e:r===null?r=Object.getOwnPropertyDescriptor(e,t):r,n;if(typeof Reflect=="object"&&typeof Reflect.decorate=="function")i=Reflect.decorate(a,e,t,r);else for(var s=a.length-1;s>=0;s--)(n=a[s])&&(i=(o<3?n(i):o>3?n(e,t,i):n(e,t))||i);return o>3&&i&&Object.defineProperty(e,t,i),i};function Dt(){let a=new Date,e=a.getFullYear(),t=String(a.getMonth()+1).padStart(2,"0"),r=String(a.getDate()).padStart(2,"0");return`${e}-${t}-${r}`}function tt(a,e){if(!a)return"";if(a.includes("T")){let[r,o]=a.split("T");switch(e){case"date":return r?.substring(0,10)??"";case"time":return o?.substring(0,5)??"";case"datetime-local":return`${r?.substring(0,10)??""}T${o?.substring(0,5)??""}`}}return e==="date"?a.includes("-")?a.substring(0,10):"":e==="time"&&a.includes(":")?a.substring(0,5):""}var xe=class extends f{constructor(){super(...arguments),this.api=re}render(){let e=this.controller.props;if(!e)return c;let t=e.enableDate??!0,r=e.enableTime??!1,o=typeof e.value=="string"?e.value:e.value?String(e.value):"",i=tt(o,"date"),n=tt(o,"time"),s=x=>{let g=x.target.value;if(r){let p=o.includes("T")?o.split("T")[1]:o.includes(":")?o:"00:00:00";e.setValue?.(`${g}T${p}`)}else e.setValue?.(g)},b=x=>{let g=x.target.value;if(t){let p=o.includes("T")?o.split("T")[0]:o.includes("-")?o:Dt();e.setValue?.(`${p}T${g}:00`)}else e.setValue?.(g)};return l`
      <div class="a2ui-date-time-container">
        ${e.label?l`<label class="a2ui-date-time-label">${e.label}</label>`:c}
        <div class="a2ui-date-time-inputs">
          ${t?l`
                <input
                  type="date"
                  .value=${i}
                  @change=${s}
                  class="a2ui-date-time-input"
                />
              `:c}
          ${r?l`
                <input
                  type="time"
                  .value=${n}
                  @change=${b}
                  class="a2ui-date-time-input"
                />
              `:c}
        </div>
      </div>
    `}};xe.styles=h`
    .a2ui-date-time-container {
      display: flex;
      flex-direction: column;
      gap: var(--a2ui-spacing-xs, 4px);
      width: var(--a2ui-datetimeinput-width, 100%);
    }
    input {
      box-sizing: border-box;
      width: 100%;
    }
    .a2ui-date-time-label {
      font-size: var(
        --a2ui-datetimeinput-label-font-size,
        var(--a2ui-label-font-size, var(--a2ui-font-size-s, 14px))
      );
      font-weight: var(--a2ui-datetimeinput-label-font-weight, bold);
      color: var(--a2ui-text-color-text, var(--a2ui-color-on-background, #333));
    }
    .a2ui-date-time-inputs {
      display: flex;
      gap: var(--a2ui-spacing-s, 8px);
      width: 100%;
    }
    .a2ui-date-time-input {
      padding: var(--a2ui-datetimeinput-padding, 8px);
      border-radius: var(--a2ui-datetimeinput-border-radius, 4px);
      border: var(--a2ui-datetimeinput-border, 1px solid var(--a2ui-color-border, #ccc));
      background-color: var(--a2ui-datetimeinput-background, var(--a2ui-color-input, #fff));
      color: var(--a2ui-datetimeinput-color, var(--a2ui-color-on-input, #333));
      font-family: inherit;
      flex: 1;
    }
    .a2ui-date-time-input::-webkit-datetime-edit,
    .a2ui-date-time-input::-webkit-datetime-edit-fields-wrapper {
      color: var(--a2ui-datetimeinput-color, var(--a2ui-color-on-input, #333));
    }
  `;xe=Tt([d("a2ui-datetimeinput")],xe);var it={...re,tagName:"a2ui-datetimeinput"};var rt=function(a,e,t,r){var o=arguments.length,i=o<3?e:r===null?r=Object.getOwnPropertyDescriptor(e,t):r,n;if(typeof Reflect=="object"&&typeof Reflect.decorate=="function")i=Reflect.decorate(a,e,t,r);else for(var s=a.length-1;s>=0;s--)(n=a[s])&&(i=(o<3?n(i):o>3?n(e,t,i):n(e,t))||i);return o>3&&i&&Object.defineProperty(e,t,i),i},I=class extends f{constructor(){super(...arguments),this.filter="",this.api=te}render(){let e=this.controller?.props;if(!e)return c;let t=e.value,r=Array.isArray(t)?t:typeof t=="string"?[t]:[],o=e.variant==="multipleSelection",i=e.displayStyle==="chips",n=u=>{let v=e.setValue;typeof v=="function"&&(o?r.includes(u)?v(r.filter(y=>y!==u)):v([...r,u]):v([u]))},s=(e.options||[]).filter(u=>!e.filterable||this.filter===""||String(u.label).toLowerCase().includes(this.filter.toLowerCase())),b=this.context?.dataContext?.surface?.id||"default",x=this.context?.componentModel?.id||"choice-picker",p=(this.context?.dataContext?.path||"/").replace(/[^a-zA-Z0-9-]/g,"_"),m=`a2ui-choice-${b}-${x}-${p}`;return l`
      ${e.label?l`<label>${e.label}</label>`:c}
      ${e.filterable?l`
            <input
              type="text"
              class="filter-input"
              placeholder="Filter options..."
              aria-label="Filter options"
              .value=${this.filter}
              @input=${u=>this.filter=u.target.value}
            />
          `:c}
      <div
        class=${w({"a2ui-choice-picker":!0,options:!0,"a2ui-options-group":!i,chips:i,"a2ui-chips-group":i})}
      >
        ${s.map(u=>i?l`
                <button
                  type="button"
                  class=${w({"a2ui-chip":!0,chip:!0,active:r.includes(u.value),selected:r.includes(u.value)})}
                  aria-pressed=${r.includes(u.value)}
                  @click=${()=>n(u.value)}
                >
                  ${u.label}
                </button>
              `:l`
                <label class="a2ui-option-label">
                  <input
                    type=${o?"checkbox":"radio"}
                    name=${o?c:m}
                    value=${u.value}
                    .checked=${r.includes(u.value)}
                    @change=${()=>n(u.value)}
                    class="a2ui-option-input"
                  />
                  <span class="a2ui-option-text">${u.label}</span>
                </label>
              `)}
      </div>
    `}};I.styles=h`
    :host,
    .a2ui-choice-picker {
      display: flex;
      flex-direction: column;
      width: 100%;
      gap: var(--a2ui-choicepicker-gap, var(--a2ui-spacing-xs, 0.25rem));
      padding: var(--a2ui-choicepicker-padding, 0);
    }
    .options,
    .a2ui-options-group {
      display: flex;
      flex-direction: column;
      gap: var(--a2ui-choicepicker-gap, var(--a2ui-spacing-xs, 0.25rem));
    }
    label,
    .a2ui-option-label {
      display: flex;
      align-items: center;
      gap: var(--a2ui-choicepicker-gap, var(--a2ui-spacing-xs, 0.25rem));
      cursor: pointer;
      color: var(--a2ui-text-color-text, var(--a2ui-choicepicker-label-color, inherit));
      font-size: var(--a2ui-choicepicker-label-font-size, inherit);
    }
    :host,
    a2ui-choicepicker > label {
      font-size: var(
        --a2ui-choicepicker-label-font-size,
        var(--a2ui-label-font-size, var(--a2ui-font-size-s))
      );
      font-weight: var(--a2ui-choicepicker-label-font-weight, var(--a2ui-label-font-weight, bold));
    }
    .filter-input {
      background-color: var(--a2ui-color-input, #fff);
      color: var(--a2ui-color-on-input, #333);
      border: var(
        --a2ui-textfield-border,
        var(--a2ui-border, 1px solid var(--a2ui-color-border, #ccc))
      );
      border-radius: var(--a2ui-textfield-border-radius, var(--a2ui-spacing-m, 4px));
      padding: var(
        --a2ui-choicepicker-filter-padding,
        var(--a2ui-spacing-xs, 4px) var(--a2ui-spacing-s, 8px)
      );
      margin-bottom: var(--a2ui-choicepicker-filter-margin-bottom, var(--a2ui-spacing-s, 0.25rem));
      font-family: inherit;
    }
    .filter-input:focus {
      outline: none;
      border-color: var(--a2ui-textfield-color-border-focus, var(--a2ui-color-primary, #17e));
    }
    .a2ui-option-input {
      width: var(--a2ui-choicepicker-checkbox-size, 1rem);
      height: var(--a2ui-choicepicker-checkbox-size, 1rem);
    }
    .chips,
    .a2ui-chips-group {
      display: flex;
      flex-direction: row;
      flex-wrap: wrap;
      gap: var(--a2ui-choicepicker-gap, var(--a2ui-spacing-xs, 0.25rem));
    }
    .chip,
    .a2ui-chip {
      padding: var(
        --a2ui-choicepicker-chip-padding,
        var(--a2ui-spacing-s, 4px) var(--a2ui-spacing-m, 8px)
      );
      border-radius: var(--a2ui-choicepicker-chip-border-radius, 999px);
      border: var(--a2ui-choicepicker-chip-border, 1px solid var(--a2ui-color-border, #ccc));
      background-color: var(--a2ui-choicepicker-chip-background, var(--a2ui-color-surface, #fff));
      color: var(--a2ui-color-on-surface, inherit);
      cursor: pointer;
      font-size: var(--a2ui-choicepicker-chip-font-size, var(--a2ui-font-size-xs, 0.75rem));
      font-family: inherit;
      font-weight: var(--a2ui-choicepicker-chip-font-weight, normal);
      transition: all 0.2s;
    }
    .chip.selected,
    .chip.active,
    .a2ui-chip.selected,
    .a2ui-chip.active {
      background-color: var(
        --a2ui-choicepicker-chip-background-selected,
        var(--a2ui-color-primary, #007bff)
      );
      color: var(--a2ui-color-on-primary, #fff);
      border-color: var(
        --a2ui-choicepicker-chip-background-selected,
        var(--a2ui-color-primary, #007bff)
      );
    }
  `;rt([$()],I.prototype,"filter",void 0);I=rt([d("a2ui-choicepicker")],I);var at={...te,tagName:"a2ui-choicepicker"};var ot=function(a,e,t,r){var o=arguments.length,i=o<3?e:r===null?r=Object.getOwnPropertyDescriptor(e,t):r,n;if(typeof Reflect=="object"&&typeof Reflect.decorate=="function")i=Reflect.decorate(a,e,t,r);else for(var s=a.length-1;s>=0;s--)(n=a[s])&&(i=(o<3?n(i):o>3?n(e,t,i):n(e,t))||i);return o>3&&i&&Object.defineProperty(e,t,i),i},B=class extends f{constructor(){super(...arguments),this.api=J,this.activeIndex=0}willUpdate(e){super.willUpdate(e);let t=this.controller.props;t?.tabs&&this.activeIndex>=t.tabs.length&&(this.activeIndex=0)}render(){let e=this.controller.props;return!e||!e.tabs?c:l`
      <div class="a2ui-tabs">
        <div class="a2ui-tab-bar">
          ${e.tabs.map((t,r)=>l`
              <button
                class=${w({"a2ui-tab-button":!0,active:r===this.activeIndex})}
                @click=${()=>this.activeIndex=r}
              >
                ${t.title}
              </button>
            `)}
        </div>
        <div class="a2ui-tab-content">
          ${e.tabs[this.activeIndex]?l`${this.renderNode(e.tabs[this.activeIndex].child)}`:c}
        </div>
      </div>
    `}};B.styles=h`
    .a2ui-tabs {
      display: flex;
      flex-direction: column;
      width: 100%;
    }
    .a2ui-tab-bar {
      display: flex;
      border-bottom: var(--a2ui-tabs-border, 2px solid var(--a2ui-color-border, #eee));
      gap: var(--a2ui-spacing-m, 16px);
    }
    .a2ui-tab-button {
      padding: var(--a2ui-spacing-s, 8px) var(--a2ui-spacing-m, 16px);
      border: none;
      background: var(--a2ui-tabs-header-background, transparent);
      cursor: pointer;
      font-weight: 500;
      color: var(--a2ui-tabs-header-color, var(--a2ui-text-caption-color, #666));
      border-bottom: 2px solid transparent;
      margin-bottom: -2px;
    }
    .a2ui-tab-button.active {
      background: var(--a2ui-tabs-header-background-active, transparent);
      color: var(--a2ui-tabs-header-color-active, var(--a2ui-color-primary, #007bff));
      border-bottom: 2px solid var(--a2ui-color-primary, #007bff);
    }
    .a2ui-tab-content {
      padding: var(--a2ui-tabs-content-padding, var(--a2ui-spacing-m, 16px) 0);
    }
  `;ot([$()],B.prototype,"activeIndex",void 0);B=ot([d("a2ui-tabs")],B);var nt={...J,tagName:"a2ui-tabs"};var st=function(a,e,t,r){var o=arguments.length,i=o<3?e:r===null?r=Object.getOwnPropertyDescriptor(e,t):r,n;if(typeof Reflect=="object"&&typeof Reflect.decorate=="function")i=Reflect.decorate(a,e,t,r);else for(var s=a.length-1;s>=0;s--)(n=a[s])&&(i=(o<3?n(i):o>3?n(e,t,i):n(e,t))||i);return o>3&&i&&Object.defineProperty(e,t,i),i},L=class extends f{constructor(){super(...arguments),this.isOpen=!1,this.api=W}openModal(){this.isOpen=!0}closeModal(){this.isOpen=!1}render(){let e=this.controller.props;return e?l`
      <div class="a2ui-modal-wrapper">
        <div @click=${()=>this.openModal()} class="a2ui-modal-trigger">
          ${e.trigger?l`${this.renderNode(e.trigger)}`:c}
        </div>
        ${this.isOpen?l`
              <div class="a2ui-modal-overlay" @click=${()=>this.closeModal()}>
                <div
                  class="a2ui-modal-content"
                  role="dialog"
                  aria-modal="true"
                  @click=${t=>t.stopPropagation()}
                >
                  <button
                    type="button"
                    class="a2ui-modal-close"
                    aria-label="Close"
                    @click=${()=>this.closeModal()}
                  >
                    &times;
                  </button>
                  ${e.content?l`${this.renderNode(e.content)}`:c}
                </div>
              </div>
            `:c}
      </div>
    `:c}};L.styles=h`
    :host,
    a2ui-modal {
      display: inline-block;
    }
    .a2ui-modal-wrapper {
      display: inline-block;
    }
    .a2ui-modal-trigger {
      cursor: pointer;
    }
    .a2ui-modal-overlay {
      position: fixed;
      top: 0;
      left: 0;
      width: 100vw;
      height: 100vh;
      background: var(--a2ui-modal-backdrop-bg, rgba(0, 0, 0, 0.5));
      display: flex;
      justify-content: center;
      align-items: center;
      z-index: 1000;
    }
    .a2ui-modal-content {
      background: var(--a2ui-modal-background, var(--a2ui-color-surface, #fff));
      padding: var(--a2ui-modal-padding, var(--a2ui-spacing-xl, 32px));
      border-radius: var(--a2ui-modal-border-radius, var(--a2ui-border-radius, 8px));
      position: relative;
      min-width: 300px;
      max-width: 80%;
      max-height: 80%;
      overflow-y: auto;
      box-shadow: var(--a2ui-modal-box-shadow, 0 10px 25px rgba(0, 0, 0, 0.2));
    }
    .a2ui-modal-close {
      position: absolute;
      top: 10px;
      right: 15px;
      border: none;
      background: none;
      font-size: 24px;
      cursor: pointer;
      color: var(--a2ui-text-caption-color, #999);
    }
    .a2ui-modal-close:hover {
      color: var(--a2ui-text-color, #333);
    }
  `;st([$()],L.prototype,"isOpen",void 0);L=st([d("a2ui-modal")],L);var lt={...W,tagName:"a2ui-modal"};var Nt=new Ae("https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json",[We,Be,He,Xe,at,Fe,it,Qe,Ge,Ze,Ue,lt,Ve,et,nt,Ie,Le,Je],Pe);export{_e as A2uiController,T as A2uiLitElement,ct as A2uiSurface,ut as Context,Nt as basicCatalog};
